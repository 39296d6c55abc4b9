/** A problem the sandbox bank saw, for logs and tests. */
export type SandboxBankEvent =
  /** A file delivered to /inbound did not decrypt or did not read as NACHA: its acknowledgement says REJECTED. */
  | { type: 'file-rejected'; username: string; file: string; reason: string }
  /** The bank could not finish answering a delivered file (an I/O error, the file gone). */
  | { type: 'processing-failed'; username: string; file: string; message: string }
  /** A connection ended with an upload still open: the partial file was dropped. */
  | { type: 'upload-abandoned'; username: string; file: string };
