// Package maintain keeps HAADE's Iceberg tables small and fast without
// touching what pipelines resume from: compaction (Compact), snapshot
// expiry (ExpireSnapshots), manifest rewrites (RewriteManifests) and
// orphan-file deletion (DeleteOrphans), run in that order by Maintain for
// pipelines/maintain.
//
// Every commit is pinned to the snapshot it read (icebergio.CommitPinned),
// so a pipeline's commit in between is a conflict, retried on the new
// table, and never lost; no action changes the offsets that
// icebergio.CommittedOffsets returns (ErrOffsetsChanged).
//
// Its tests are in io/icebergio (maintain_test.go, package icebergio_test):
// they commit windows through the real write path step by step with that
// package's test-only WriteWindow and CommitWindows.
package maintain
