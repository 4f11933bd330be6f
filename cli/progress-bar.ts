/** A one-line progress bar for a TTY (stderr), redrawn in place. */
export function progressBar(write: (s: string) => void): (done: number, total: number) => void {
  let last = -1;
  return (done, total) => {
    const pct = Math.floor((100 * done) / total);
    if (pct === last && done !== total) return;
    last = pct;
    const filled = Math.round((30 * done) / total);
    write(`\r[${'#'.repeat(filled)}${' '.repeat(30 - filled)}] ${done}/${total} operations${done === total ? '\n' : ''}`);
  };
}
