/** `1 document`, `2 documents`: a count with its noun agreeing. */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}
