/** A failure retrying will not fix: the document fails at once with this message. */
export class PermanentIngestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentIngestError";
  }
}
