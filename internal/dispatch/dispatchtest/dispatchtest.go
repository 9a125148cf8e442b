// Package dispatchtest reads and writes the dispatcher's tables for other
// packages' tests, so that they check or set up a future, an arrival or a
// mailbox's cursor without naming the dispatcher's tables or columns
// (dispatch owns them: docs/ARCHITECTURE.md, "Who owns which table").
package dispatchtest
