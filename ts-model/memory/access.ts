import { z } from 'zod';

/**
 * Access rights of a registered memory region (RFC 5040 §2 "Remote Access Rights"; RFC 5042 §5.1;
 * RFC 7306 §5 adds the right to be the target of a remote atomic). The local rights govern what
 * the local RNIC may do with the buffer (e.g. place a Read Response needs local write,
 * spec/ddp-rdmap.md §5.3 T3); the remote rights govern what the peer may ask for.
 */
export const ACCESS_RIGHTS = ['local-read', 'local-write', 'remote-read', 'remote-write', 'remote-atomic'] as const;

export type AccessRight = (typeof ACCESS_RIGHTS)[number];

export const AccessRightSchema = z.enum(ACCESS_RIGHTS);
