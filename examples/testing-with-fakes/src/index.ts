/** Placeholder entry point; the package is built in its own issue. */
export const PACKAGE_NAME = "@svc/example-testing-with-fakes";
