/**
 * `T` with its members writable, for an object of one of the core's readonly types being
 * built on the request path: the literal is made with the members every value has, and an
 * optional member is assigned after it, instead of a conditional spread, which copies the
 * object (docs/ARCHITECTURE.md "Style to follow"). Internal to the core.
 */
export type Building<T> = { -readonly [K in keyof T]: T[K] };
