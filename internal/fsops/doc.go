// Package fsops is the engine of the fs tool: path containment under the
// configured roots, atomic replace with bounded retries, the list, read,
// stat, search, write, patch and undo operations, and durable undo receipts.
// It knows nothing about MCP: the tool facade decodes input into the *Input
// types here (their JSON tags are the tool's field names), calls the Engine
// method, and renders the *Result types or the typed errors:
//
//	*ContainmentError (errors.Is ErrContainment)  the path broke a Rule
//	*ConflictError    (errors.Is ErrConflict)     state "conflict"
//	*InputError       (errors.Is ErrInvalidInput) a field the operation cannot accept
//	ErrReceiptNotFound, ErrTooLarge, fs.ErrNotExist (wrapped)
//	*ExpiredReceiptError (errors.Is ErrReceiptExpired) undo of a receipt retention pruned
//	*OperatorChangeError (errors.Is ErrOperatorChange) a chat's undo of the operator's undo or redo
//	anything else: an internal failure, not to be shown verbatim
//
// Decisions a user of the tool should know:
//
//   - Paths must be absolute. Any ".." component is refused, even one that
//     would stay inside a root, so the path checked is the path used. The
//     path operated on is the resolved real path (returned in every result),
//     so a symlink inside a root is followed and its target must be inside
//     a root too. On Windows the reserved-name, stream, UNC, device,
//     trailing-dot and 8.3 rules apply as well, and names compare
//     case-insensitively; elsewhere those are ordinary names.
//   - Hearth's data directory (denied in Roots) is unreachable even under a
//     root; search prunes it.
//   - Write creates missing parent directories; undo does not remove them.
//   - Search matches names and lines of files up to 2 MiB that do not look
//     binary: a literal or an RE2 regex, optionally ignoring case, honouring
//     .gitignore/.ignore files, hidden entries and include/exclude globs
//     like ripgrep, walking in parallel and answering in path, line order
//     (search.go).
//   - Replacing a file by rename gives it a new identity: hard links to the
//     old file keep the old content, and on Windows explicit ACLs and
//     attributes other than read-only are not carried over (the new file
//     inherits its directory's). The mode of an existing file is kept.
//   - The check of expected_sha256 and the replace are atomic with respect to
//     other fs calls (a per-path lock), not to other programs editing the
//     file at the same moment.
//   - A receipt belongs to the conversation whose call made it (a tool
//     call, a scatter item, a recipe step or an approved permit all carry
//     the caller's route). Only a call in the same scope can undo it
//     (primitive.RouteMatch: the same conversation, and every anonymous
//     request shares one scope); to anyone else it is not_found, word for
//     word as an id that never existed, even once it has expired. Ids are
//     unguessable, but can leak through a shared transcript.
//   - Receipts are kept until retention prunes them (PruneReceipts); an
//     undo of a pruned receipt then fails with ErrReceiptExpired.
//
// Crash safety and the order of effects is documented on Engine.mutate; in
// short, the receipt row is inserted as pending before the rename and
// committed after it, and Engine.Recover settles what a crash left.
package fsops
