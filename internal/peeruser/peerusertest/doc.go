// Package peerusertest runs a small HTTP client (testdata/peerclient) as
// another operating-system account, for the tests of Hearth's same-user
// loopback check (Linux only: it switches uid with SysProcAttr.Credential,
// which needs root).
package peerusertest
