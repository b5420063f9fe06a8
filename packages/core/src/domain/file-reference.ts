/**
 * A reference to a file uploaded beforehand, as an element of `files` or
 * `background_files` in a run request.
 *
 * Source: docs/api-spec.md "Uploaded file reference"; docs/CONTRACT.md "Runs" (all three members
 * non-empty strings, `content_type` a media type `type/subtype`).
 */
export interface FileReference {
  /** Storage key of the uploaded file. */
  readonly file_key: string;
  /** Original file name. */
  readonly file_name: string;
  /** Media type (RFC 6838), e.g. `application/pdf`. */
  readonly content_type: string;
}
