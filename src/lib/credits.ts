/**
 * Credits are stored as integer micro-credits (1 credit = 1,000,000 micro) so
 * that sums are exact; the API shows decimal numbers.
 */
export const MICRO = 1_000_000;

export function toMicro(credits: number): number {
  return Math.round(credits * MICRO);
}

export function fromMicro(micro: number): number {
  return micro / MICRO;
}
