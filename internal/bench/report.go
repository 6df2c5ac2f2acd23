package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Design targets (../shared/DESIGN.md), as numbers.
const (
	targetLocalCommit = 2.0  // × one fsync'd write of the step object as a new file
	targetMinIOCommit = 1.3  // × one PUT of the same size
	targetBytesRatio  = 1.2  // stored ÷ changed, before compression
	targetPuts        = 1.1  // PUTs per step, amortised
	targetResumeReads = 64   // objects read to resume a 1,000-step append session
	targetLargeStage  = 0.70 // × the slowest stage
	targetLargeRestic = 2.0  // × restic
	targetFilesVsGit  = 1.0  // × git commit -a, files workload through the CLI
	targetFilesBytes  = 2.0  // written ÷ changed, files workload through the CLI
	targetCLIvsDD     = 2.0  // × dd+fsync of a JSON file, one fresh CLI commit
)

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func ms(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func yes(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// p50Of is the median of the first n values of vs.
func p50Of(vs []float64, n int) float64 {
	n = min(n, len(vs))
	if n == 0 {
		return 0
	}
	s := slices.Clone(vs[:n])
	slices.Sort(s)
	return s[(n-1)/2]
}

func requests(p PerStep) string {
	return fmt.Sprintf("%.3f PUT, %.3f GET, %.3f LIST, %.3f HEAD, %.3f DELETE", p.Put, p.Get, p.List, p.Head, p.Delete)
}

// Markdown renders the results as the report's markdown.
func Markdown(r *Results) string {
	var b strings.Builder
	cfg := r.Config
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	mode := "full run (`make bench`)"
	if cfg.Quick {
		mode = "quick run (`make bench-quick`: small sizes, checks the harness only; its numbers mean little)"
	}
	w("## cairn benchmark\n\n")
	w("%s, %s. Machine: %s; %s; git: %s; restic: %s. Whole run: %v; load average %s at the start, %s at the end "+
		"(the machine is shared: every time below is only as good as the share of the cores the benchmark got).\n\n",
		r.Date.Format("2006-01-02 15:04 UTC"), mode, r.Machine, r.Go, r.GitVers, r.Restic, r.Took.Round(time.Second), r.Load[0], r.Load[1])
	w("Workloads (package internal/workload, seed %d): append (whole state as one JSON document every step, %d steps; MinIO %d steps; git the first %d, restic the first %d), "+
		"files (%d source files, %d steps), long sessions for resume (%s steps, last %d messages kept), large state (%s fresh, incompressible and compressible).\n\n",
		cfg.Seed, cfg.AppendSteps, cfg.MinIOSteps, min(cmpOrInt(cfg.GitSteps, cfg.AppendSteps), cfg.AppendSteps), min(cfg.ResticSteps, cfg.AppendSteps), cfg.FilesCount, cfg.FilesSteps,
		joinInts(cfg.ResumeSteps), cfg.ResumeWindow, size(cfg.LargeSize))

	// Targets.
	w("### Design targets, against limits measured in this run\n\n")
	w("| figure | cairn | limit or peer (same run) | ratio | target | |\n| --- | --- | --- | --- | --- | --- |\n")
	a, m, f := r.Append, r.MinIO, r.Fsync.Latency
	if o := a.ObjectWrite; o != nil {
		for _, p := range []struct {
			name       string
			got, limit float64
		}{{"p50", a.Latency.P50, o.P50}, {"p99", a.Latency.P99, o.P99}} {
			q := ratio(p.got, p.limit)
			w("| commit latency %s, local store, append | %s | one fsync'd write of each step's object as a new file (file and directory fsync'd): %s | %.2f× | ≤ %.0f× | %s |\n",
				p.name, ms(p.got), ms(p.limit), q, targetLocalCommit, yes(q <= targetLocalCommit))
		}
	}
	w("| the same p50 beside a smaller write: one fsync'd 4 KiB file, its directory not fsync'd | %s | %s | %.2f× | (none) | |\n",
		ms(a.Latency.P50), ms(f.P50), ratio(a.Latency.P50, f.P50))
	if m.RawPut != nil {
		for _, p := range []struct {
			name       string
			got, limit float64
		}{{"p50", m.Latency.P50, m.RawPut.P50}, {"p99", m.Latency.P99, m.RawPut.P99}} {
			q := ratio(p.got, p.limit)
			w("| commit latency %s, MinIO, append | %s | one PUT of the same size: %s | %.2f× | ≤ %.1f× | %s |\n",
				p.name, ms(p.got), ms(p.limit), q, targetMinIOCommit, yes(q <= targetMinIOCommit))
		}
	}
	if s3 := r.MinIOS3; s3.RawPut != nil {
		q := ratio(s3.Latency.P50, s3.RawPut.P50)
		w("| commit latency p50, MinIO through s3:// (aws-sdk-go-v2), append | %s | one PUT of the same size through it: %s | %.2f× | ≤ %.1f× | %s |\n",
			ms(s3.Latency.P50), ms(s3.RawPut.P50), q, targetMinIOCommit, yes(q <= targetMinIOCommit))
	}
	for _, c := range []CommitResult{a, m} {
		ok := c.Requests.Put <= targetPuts && c.Requests.Get == 0 && c.Requests.List == 0
		w("| requests per step, %s, append (max %d PUT in one step) | %s | | | 1 PUT (≤ %.1f amortised), 0 GET, 0 LIST | %s |\n",
			c.Store, c.MaxPuts, requests(c.Requests), targetPuts, yes(ok))
	}
	q := ratio(float64(a.RawStored), float64(a.Changed))
	w("| bytes stored per step ÷ bytes changed, append, before compression | %s / %s a step | | %.3f | ≤ %.1f | %s |\n",
		size(a.RawStored/int64(max(1, len(a.StepMS)))), size(a.Changed/int64(max(1, len(a.StepMS)))), q, targetBytesRatio, yes(q <= targetBytesRatio))
	w("| the same, after compression (bytes written) | %s a step | | %.3f | (none) | |\n",
		size(a.Stored/int64(max(1, len(a.StepMS)))), ratio(float64(a.Stored), float64(a.Changed)))
	for _, res := range r.Resume {
		find := res.Find.Get + res.Find.List + res.Find.Head
		w("| resume %s steps (%s): requests to find the head | %d (%d GET, %d LIST, %d HEAD), %s | | | O(1) | %s |\n",
			commas(res.Steps), res.Label, find, res.Find.Get, res.Find.List, res.Find.Head, ms(res.FindMS), yes(find <= 4))
		if strings.Contains(res.Label, "append workload") {
			reads := res.Find.Get + res.Load.Get
			w("| resume %s steps (%s): objects read in all | %d GETs, state loaded in %s | | | ≤ %d | %s |\n",
				commas(res.Steps), res.Label, reads, ms(res.LoadMS), targetResumeReads, yes(reads <= targetResumeReads))
		}
	}
	for _, l := range r.Large {
		slow, slowName := l.slowestStage()
		q := ratio(l.Cairn.MBps(), slow)
		w("| large state (%s, %s fresh) commit throughput | %.0f MB/s | slowest stage, %s: %.0f MB/s | %.0f%% | ≥ %.0f%% | %s |\n",
			l.Variant, size(l.Cairn.Bytes), l.Cairn.MBps(), slowName, slow, 100*q, 100*targetLargeStage, yes(q >= targetLargeStage))
		q = ratio(l.Cairn.MBps(), l.Restic.MBps())
		// The slowest stage alone against restic bounds what a commit,
		// which runs every stage on the same cores, can reach.
		w("| large state (%s) against restic | %.0f MB/s | restic backup: %.0f MB/s (the slowest stage alone: %.2f×; the CPU stages sharing the cores: %.0f MB/s, %.2f×) | %.2f× | ≥ %.0f× | %s |\n",
			l.Variant, l.Cairn.MBps(), l.Restic.MBps(), ratio(slow, l.Restic.MBps()), l.cpuCeiling(), ratio(l.cpuCeiling(), l.Restic.MBps()), q, targetLargeRestic, yes(q >= targetLargeRestic))
		for _, p := range []struct{ phase, what string }{{"large-cairn", "commit"}, {"large-checkout", "checkout"}} {
			rss := r.largeRSS(p.phase, l.Variant)
			w("| large state (%s, %s) %s peak RSS | %s | bound: %s | %.2f× | ≤ 1× | %s |\n",
				l.Variant, size(l.Cairn.Bytes), p.what, mib(rss), mib(targetLargeRSS), ratio(float64(rss), targetLargeRSS), yes(rss > 0 && rss <= targetLargeRSS))
		}
	}
	if fc := r.FilesCLI; fc.Steps > 0 {
		q := ratio(fc.Cairn.P50, fc.Git.P50)
		w("| directory state, files workload through the CLI (fresh process each step): commit p50 | %s | `git commit -a` on the same tree: %s | %.2f× | ≤ %.0f× | %s |\n",
			ms(fc.Cairn.P50), ms(fc.Git.P50), q, targetFilesVsGit, yes(q <= targetFilesVsGit))
		q = fc.WrittenRatio()
		w("| the same: bytes written ÷ bytes changed (compaction included) | %s / %s a step | | %.3f | ≤ %.0f | %s |\n",
			size(fc.Written/int64(max(1, fc.Steps-1))), size(fc.Changed/int64(max(1, fc.Steps-1))), q, targetFilesBytes, yes(q <= targetFilesBytes))
	}
	if c := r.CLI; c.Steps > 1 {
		q := c.Ratio()
		w("| `cairn commit` in a fresh process, windowed append workload (%s document): p50 | %s | a JSON file per step with `dd conv=fsync`: %s | %.2f× | ≤ %.0f× | %s |\n",
			size(int64(c.DocBytes)), ms(c.Cairn.P50), ms(c.DD.P50), q, targetCLIvsDD, yes(q <= targetCLIvsDD))
		if st := c.Startup.P50; st > 0 {
			// A commit cannot cost less than its process's start-up:
			// the row says how much of the ratio above that is.
			w("| the same: start-up of the binary alone (`cairn version`, a fresh process; were it the only cost above dd's, the ratio above would be %.2f×) | %s | the commit's p50 less it: %s | %.0f%% of the commit | | |\n",
				ratio(c.DD.P50+st, c.DD.P50), ms(st), ms(c.Cairn.P50-st), 100*ratio(st, c.Cairn.P50))
		}
		if fl := c.Floor.P50; fl > 0 {
			// The floor under the start-up: the fixed modules' packages
			// alone. Were a commit only that and dd's own work, the
			// ratio would be this; at or above the target's bound, the
			// target is out of reach of any binary linking them.
			w("| the same: start-up of a program linking only the fixed modules' packages cairn imports (aws-sdk-go-v2, minio-go, blake3, klauspost/compress) and doing nothing (were it the only cost above dd's, the ratio above would be %.2f×) | %s | `cairn version`: %s | %.0f%% of cairn's start-up | | |\n",
				ratio(c.DD.P50+fl, c.DD.P50), ms(fl), ms(c.Startup.P50), 100*ratio(fl, c.Startup.P50))
		}
		w("| the same: object-store requests a step (head cache of the previous step) | %s | | %d of %d steps 1 PUT, 0 GET, 0 LIST | 1 PUT, 0 GET, 0 LIST | %s |\n",
			requests(c.Requests), c.OnePut, c.Steps-1, yes(c.OnePut == c.Steps-1))
	}
	for _, p := range r.Peers {
		n := len(p.Series)
		if n == 0 || n > len(a.Series) {
			continue
		}
		q := ratio(float64(p.Series[n-1]), float64(a.Series[n-1]))
		w("| stored bytes after %d append steps, against %s | %s | %s: %s | %.1f× less | far ahead | %s |\n",
			n, p.Name, size(a.Series[n-1]), p.Name, size(p.Series[n-1]), q, yes(q >= 10))
	}
	b.WriteString(jsonDeltaMarkdown(r))
	b.WriteString(historyMarkdown(r))
	w("\n")

	// Commits.
	w("### Commits\n\n")
	w("| workload | store | steps | p50 | p99 | requests per step | changed / step | stored before compression / step | written / step | raw ÷ changed | written ÷ changed | first step written |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range []CommitResult{r.Append, r.Files, r.MinIO} {
		n := int64(max(1, len(c.StepMS)))
		w("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %.3f | %.3f | %s |\n", c.Workload, c.Store, c.Steps,
			ms(c.Latency.P50), ms(c.Latency.P99), requests(c.Requests), size(c.Changed/n), size(c.RawStored/n), size(c.Stored/n),
			ratio(float64(c.RawStored), float64(c.Changed)), ratio(float64(c.Stored), float64(c.Changed)), size(c.FirstStep))
	}
	w("\nLimits: one fsync'd 4 KiB write (create, write, fsync, close) p50 %s, p99 %s", ms(f.P50), ms(f.P99))
	if o := a.ObjectWrite; o != nil {
		w("; one fsync'd write of each append step's object size as a new file, then its directory fsync'd, after each commit, p50 %s, p99 %s", ms(o.P50), ms(o.P99))
	}
	if m.RawPut != nil {
		w("; one plain PUT of each step object's size to the same MinIO through the same client (minio-go), each PUT and each commit after the same %v pause, p50 %s, p99 %s", minioPause, ms(m.RawPut.P50), ms(m.RawPut.P99))
	}
	w(". Figures cover steps 2..N; the first step stores the initial state.\n\n")
	if fc := r.FilesCLI; fc.Steps > 0 {
		w("Files workload through the CLI, %d steps, each step one `cairn commit --dir` process (stat cache under XDG_CACHE_HOME) and, on the same tree, "+
			"`git add -A` (untimed) then `git commit -q -a` (timed): cairn p50 %s, p99 %s; git p50 %s, p99 %s; CPU (user + system) a step: cairn %s, git %s. "+
			"cairn wrote %s a step for %s changed (%.3f×; step 1 wrote %s); git's .git holds %s of loose objects at the end.\n\n",
			fc.Steps, ms(fc.Cairn.P50), ms(fc.Cairn.P99), ms(fc.Git.P50), ms(fc.Git.P99), ms(fc.CairnCPU), ms(fc.GitCPU),
			size(fc.Written/int64(max(1, fc.Steps-1))), size(fc.Changed/int64(max(1, fc.Steps-1))), fc.WrittenRatio(), size(fc.FirstWritten), size(fc.GitSize))
	}

	// Resume.
	w("### Resume (a fresh process, empty cache)\n\n")
	w("| session | steps | find head | find requests | load state | load requests | state |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, res := range r.Resume {
		w("| %s | %s | %s | %d GET, %d LIST, %d HEAD | %s | %d GET | %s |\n", res.Label, commas(res.Steps), ms(res.FindMS),
			res.Find.Get, res.Find.List, res.Find.Head, ms(res.LoadMS), res.Load.Get, size(int64(res.StateBytes)))
	}
	for _, s := range r.Setups {
		w("\nWriting the %s-step session to %s took %v (%.2f ms a step).", commas(s.Steps), s.Where, s.Took.Round(time.Second), float64(s.Took)/1e6/float64(max(1, s.Steps)))
		if s.Paired {
			w(" Its last %d commits, each in turn with one of a second session's steps %s–%s: p50 %s against %s; the session's own steps around %s, minutes earlier, took %s (the machine's speed drifts between the two).",
				pairedSteps, commas(pairedAround-pairedSteps/2+1), commas(pairedAround+pairedSteps/2), ms(s.Late.P50), ms(s.Early.P50), commas(pairedAround), ms(s.SoloEarly.P50))
		}
	}
	w("\n\n")

	// Peers.
	w("### Peers on the append workload (same documents, same disk)\n\n")
	w("| store | how | steps | stored after N steps | stored / step | time / step p50 | p99 | cairn stored after N | cairn time p50 over N | peer ÷ cairn, bytes | peer ÷ cairn, time |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	w("| cairn | one step object per step, local store | %d | %s | %s | %s | %s | | | 1 | 1 |\n", a.Steps, size(last(a.Series)),
		size(last(a.Series)/int64(max(1, a.Steps))), ms(a.Latency.P50), ms(a.Latency.P99))
	for _, p := range r.Peers {
		n := len(p.Series)
		if n == 0 || n > len(a.Series) {
			continue
		}
		cp50 := p50Of(a.StepMS, n-1)
		how := p.How
		if p.AfterGC > 0 {
			how += fmt.Sprintf("; %s after a final `git gc`", size(p.AfterGC))
		}
		w("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %.1f× | %.1f× |\n", p.Name, how, n, size(p.Series[n-1]),
			size(p.Series[n-1]/int64(n)), ms(p.Latency.P50), ms(p.Latency.P99), size(a.Series[n-1]), ms(cp50),
			ratio(float64(p.Series[n-1]), float64(a.Series[n-1])), ratio(p.Latency.P50, cp50))
	}
	w("\nStored bytes against step number: [%s](%s).\n\n", PlotFile, PlotFile)

	// Large.
	w("### Large fresh state (one file, committed as a directory state)\n\n")
	w("| variant | size | cairn commit | stored | cairn checkout | chunking, all cores | BLAKE3, all cores | zstd-fastest, all cores (ratio) | disk write+fsync | restic backup (stored) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, l := range r.Large {
		w("| %s | %s | %.0f MB/s (%.1f s) | %s | %.0f MB/s | %.0f MB/s | %.0f MB/s | %.0f MB/s (%.2f×) | %.0f MB/s | %.0f MB/s, %.1f s (%s) |\n", l.Variant, size(l.Cairn.Bytes),
			l.Cairn.MBps(), l.Cairn.Took.Seconds(), size(l.Cairn.Stored), l.Checkout.MBps(), l.CDC.MBps(), l.Blake3.MBps(), l.Zstd.MBps(),
			ratio(float64(l.Zstd.Bytes), float64(l.Zstd.Stored)), l.Disk.MBps(), l.Restic.MBps(), l.Restic.Took.Seconds(), size(l.Restic.Stored))
	}
	w("\n")

	// Memory.
	w("### Peak memory (each phase is its own process; its own peak, VmHWM)\n\n")
	w("| phase | peak RSS | peak RSS of the tool it ran | wall | CPU (user+sys, with tools) |\n| --- | --- | --- | --- | --- |\n")
	var wall, cpu time.Duration
	for _, u := range r.Usage {
		arg := u.Arg
		if u.Phase == "resume" {
			arg = resumeLabel(r, u)
		}
		tool := ""
		if u.ToolRSS > 0 {
			tool = mib(u.ToolRSS)
		}
		c := ""
		if u.CPU > 0 {
			c = u.CPU.Round(time.Millisecond).String()
		}
		wall += u.Wall
		cpu += u.CPU
		w("| %s | %s | %s | %v | %s |\n", strings.TrimSpace(u.Phase+" "+arg), mib(u.MaxRSS), tool, u.Wall.Round(time.Millisecond), c)
	}
	if cpu > 0 {
		w("\nPhases took %v of wall time and %v of CPU time in all (%.2f cores busy on average).\n", wall.Round(time.Second), cpu.Round(time.Second), cpu.Seconds()/wall.Seconds())
	}
	return b.String()
}

// resumeLabel names a resume phase by the session its argument names. The
// argument is decoded, not searched: "steps":10000 is a prefix of
// "steps":100000.
func resumeLabel(r *Results, u Usage) string {
	var arg struct {
		Steps int    `json:"steps"`
		URL   string `json:"url"`
	}
	if json.Unmarshal([]byte(u.Arg), &arg) != nil {
		return ""
	}
	for _, res := range r.Resume {
		if arg.Steps == res.Steps && arg.URL == res.URL {
			return fmt.Sprintf("(%s steps, %s)", commas(res.Steps), res.Label)
		}
	}
	return ""
}

func last(s []int64) int64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, commas(n))
	}
	return strings.Join(s, ", ")
}

// commas formats n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
