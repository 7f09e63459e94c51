// How the memory page shows times and fractions.

/** A stored time in the reader's locale; the text itself when it is not a time. */
export function when(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toLocaleString();
}

/** 0..1 as a whole percentage. */
export function percent(x: number): string {
  return `${Math.round(x * 100)}%`;
}
