// Package bench is cairn's end-to-end benchmark: it runs the workloads of
// package workload against cairn and against peers (a JSON file per step,
// git, restic) in one run, measures each figure next to the physical limit
// measured in the same run (an fsync'd write, a raw PUT, raw BLAKE3 and zstd
// throughput), and writes a markdown table and a plot.
//
// Every phase runs as a child process of the benchmark (the same binary,
// started with -phase), so its peak RSS is the child's own (it says it:
// see child.go), and a resume really starts from an empty process.
package bench

// Config sizes one run. Full is `make bench`; Quick is `make bench-quick`.
type Config struct {
	Quick bool   `json:"quick"`
	Seed  uint64 `json:"seed"`
	// Dir is the scratch directory; every store and peer lives under it,
	// on the disk the fsync baseline measures.
	Dir string `json:"dir"`
	// Out is the directory results.md, results.json and the plot go to.
	Out string `json:"out"`

	FsyncSamples int   `json:"fsync_samples"` // 4 KiB fsync'd writes timed
	AppendSteps  int   `json:"append_steps"`  // cairn (local), JSON file and git on the append workload
	GitSteps     int   `json:"git_steps"`     // git's steps grow with the state (a full blob each); the first GitSteps only
	ResticSteps  int   `json:"restic_steps"`  // restic is ~1 s a step, so it runs the first ResticSteps only
	MinIOSteps   int   `json:"minio_steps"`   // cairn on MinIO
	FilesSteps   int   `json:"files_steps"`   // cairn on the files workload
	FilesCount   int   `json:"files_count"`   // files in the files workload's tree
	ResumeSteps  []int `json:"resume_steps"`  // long sessions (windowed append workload) to resume
	ResumeWindow int   `json:"resume_window"` // messages kept in the long sessions' state
	// ResumeDir holds the long sessions' stores. Writing 100,000 steps
	// through fsync takes ~15 minutes on a VM disk, so by default they go
	// to a tmpfs (/dev/shm) when there is one; a fresh resume then reads
	// from memory, as it does from the page cache on a disk just written.
	ResumeDir string `json:"resume_dir"`
	LargeSize int64  `json:"large_size"` // bytes of the large fresh state

	// Long sessions with every step kept (history phases, target 6).
	HistorySteps   []int `json:"history_steps"`   // lengths at which stored ÷ appended is measured
	HistoryResume  int   `json:"history_resume"`  // steps of the MinIO session resumed
	HistoryMessage int   `json:"history_message"` // bytes appended a step
	// CLISteps is how many steps the cli-commit phase commits through a
	// fresh `cairn commit` process each (target 7).
	CLISteps int `json:"cli_steps"`

	Git   string `json:"git"`   // git binary ("" skips the git peer)
	Cairn string `json:"cairn"` // cairn CLI binary, for the files-cli phase
	// StartFloor is the startfloor binary (internal/bench/startfloor),
	// timed in the cli-commit phase ("" leaves its row out).
	StartFloor string `json:"start_floor"`
	Restic     string `json:"restic"` // restic binary ("" skips the restic peer)

	// Set by the parent for the MinIO phase.
	MinIO *MinIOServer `json:"minio,omitempty"`
}

// MinIOServer is where the MinIO phase commits.
type MinIOServer struct {
	Host      string `json:"host"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	Bucket    string `json:"bucket"`
}

// Full returns the configuration of `make bench`, sized to finish in well
// under 20 minutes on a 2-core VM.
func Full() Config {
	return Config{
		Seed:         1,
		FsyncSamples: 300,
		AppendSteps:  1000,
		GitSteps:     300,
		ResticSteps:  100,
		MinIOSteps:   300,
		FilesSteps:   100,
		FilesCount:   2000,
		// Writing the 100,000-step session takes about 8 minutes here,
		// most of it generating the windowed workload's document, which
		// still grows (its plan); a commit compares it with the last one
		// at memory speed and parses only what changed.
		ResumeSteps:  []int{10_000, 100_000},
		ResumeWindow: 8,
		LargeSize:    1 << 30,

		HistorySteps:   []int{1000, 10_000, 100_000},
		HistoryResume:  1000,
		HistoryMessage: 1024,
		CLISteps:       100,
	}
}

// Quick returns the configuration of `make bench-quick`: every phase runs,
// on small sizes, so the harness is exercised in well under two minutes.
func Quick() Config {
	return Config{
		Quick:        true,
		Seed:         1,
		FsyncSamples: 30,
		AppendSteps:  60,
		GitSteps:     60,
		ResticSteps:  4,
		MinIOSteps:   20,
		FilesSteps:   5,
		FilesCount:   300,
		ResumeSteps:  []int{200, 1000},
		ResumeWindow: 8,
		LargeSize:    16 << 20,

		HistorySteps:   []int{100, 400},
		HistoryResume:  100,
		HistoryMessage: 1024,
		CLISteps:       8,
	}
}
