/** Makes identifiers for runs and workflow runs. */
export interface IdGenerator {
  /** @returns a new, unique identifier (UUID v4 in production). */
  newId(): string;
}
