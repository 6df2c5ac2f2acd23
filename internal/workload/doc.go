// Package workload generates the deterministic, seeded agent workloads that
// cairn's benchmark (cmd/cairn-bench) measures. The same seed always yields
// the same bytes, on every machine and Go version (math/rand/v2's PCG and
// ChaCha8 are specified bit for bit), so runs are comparable.
//
// Three workloads:
//
//   - Append: an agent loop that hands its whole state over every step as one
//     JSON document, as agent frameworks do. The document is
//     {"messages":[...], "scratchpad":"...", "plan":{...}, "step":N}: the chat
//     history grows by one message a step (0.5–8 KB of text, log-uniform; one
//     step in 20 is a 50 KB tool output), the scratchpad (1–2 KB) is rewritten
//     every step, and the plan (a list of tasks) gets a small edit: one task
//     changes status, is renamed or is added. With a Window the history keeps
//     only its last Window messages and the plan its last 50 tasks (a loop
//     that truncates its context), so the document stays the same size
//     however long the session runs.
//   - Files: a working directory of source files (~2,000 by default, 0.5–24 KB
//     each, in 40 directories). Each step edits a few files (a run of lines
//     replaced), adds one and deletes one.
//   - Large: one fresh state of a given size, either incompressible (ChaCha8
//     output) or compressible (text lines from a fixed vocabulary, which
//     zstd-fastest shrinks about 2.6×).
//
// Every generator reports the bytes that changed in each step, which the
// benchmark divides into the bytes stored.
package workload
