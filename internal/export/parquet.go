package export

import (
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/cairnlog/cairn/internal/version"
)

// StepRow is one row of the Parquet export: one step of one trajectory.
// Steps shared by several trajectories (the prefix before a fork) appear
// once per trajectory, with a different Trajectory and the same ID.
type StepRow struct {
	// Trajectory is the session whose head ends the trajectory.
	Trajectory string `parquet:"trajectory,dict"`
	// Position is the step's 1-based place in the trajectory.
	Position int32  `parquet:"position"`
	Session  string `parquet:"session,dict"`
	Step     int64  `parquet:"step"`
	// ID is the step's manifest hash (hex).
	ID       string  `parquet:"id"`
	Parent   *string `parquet:"parent,optional"` // "session@step"
	ParentID *string `parquet:"parent_id,optional"`
	// Origin is set on a fork's first step: the step it copies.
	Origin *string   `parquet:"origin,optional"`
	Time   time.Time `parquet:"time,timestamp(microsecond)"`
	Status string    `parquet:"status,dict"`
	// Role and Content are the step's main message: its last assistant
	// message, else its last message.
	Role    *string `parquet:"role,optional,dict"`
	Content *string `parquet:"content,optional"`
	// Messages is every message the step added, as a JSON array in the
	// record convention's shape.
	Messages *string `parquet:"messages,optional"`
	// ToolCalls is the step's tool calls, as a JSON array.
	ToolCalls        *string           `parquet:"tool_calls,optional"`
	Model            *string           `parquet:"model,optional,dict"`
	PromptTokens     *int64            `parquet:"prompt_tokens,optional"`
	CompletionTokens *int64            `parquet:"completion_tokens,optional"`
	CachedTokens     *int64            `parquet:"cached_tokens,optional"`
	CostUSD          *float64          `parquet:"cost_usd,optional"`
	LatencyMS        *float64          `parquet:"latency_ms,optional"`
	Labels           map[string]string `parquet:"labels"`
	Outcome          *string           `parquet:"outcome,optional,dict"`
	Reward           *float64          `parquet:"reward,optional"`
	// Record is the step record as stored (compact JSON), whether or not
	// it follows the convention.
	Record *string `parquet:"record,optional"`
	// Conventional is false when the record does not follow the
	// convention (or there is none): only Record then carries it.
	Conventional bool `parquet:"conventional"`
	// TrajectoryOutcome and TrajectoryReward are the whole trajectory's
	// (Trajectory.Outcome, .Reward), the same on each of its rows.
	TrajectoryOutcome *string  `parquet:"trajectory_outcome,optional,dict"`
	TrajectoryReward  *float64 `parquet:"trajectory_reward,optional"`
	// TrajectoryTruncated is true if the trajectory's older steps were
	// pruned (cairn prune): its first row is not the session's first step.
	TrajectoryTruncated bool `parquet:"trajectory_truncated"`
}

// rowsPerGroup bounds the rows the writer buffers before it writes a row
// group (a variable for tests).
var rowsPerGroup = 8192

// rowsPerChunk is how many rows parquet-go's writer takes at a time from
// the rows of one Write, from their first and from each row group's
// (a page is cut only between two of these chunks). Rows written by
// several calls make the same file as by one only if each call ends
// where one of these chunks does (see aligned).
const rowsPerChunk = 64

type parquetWriter struct {
	w    *parquet.GenericWriter[StepRow]
	rows []StepRow
	// written counts the rows written so far.
	written int64
}

// aligned reports whether a Write of k rows, written right after the
// rows written so far, would end where a chunk ends in the Write of
// those k rows and any that follow them (rowsPerChunk): splitting a
// trajectory's rows into such Writes changes no byte of the file.
func (p *parquetWriter) aligned(k int) bool {
	toGroupEnd := rowsPerGroup - int(p.written%int64(rowsPerGroup))
	if k <= toGroupEnd {
		return k%rowsPerChunk == 0 || k == toGroupEnd
	}
	// Chunks start again at each row group.
	return (k-toGroupEnd)%rowsPerGroup%rowsPerChunk == 0
}

// write writes rows.
func (p *parquetWriter) write(rows []StepRow) error {
	n, err := p.w.Write(rows)
	p.written += int64(n)
	return err
}

// freeTextColumns are the columns whose values are text from records, of
// any length. Their min/max statistics would copy whole values into the
// footer — one 6 MB message made a 114 MB file — so none are written
// for them (readers then just do not skip row groups by them). The short
// columns (names, ids, status, role) keep theirs.
var freeTextColumns = [][]string{
	{"content"}, {"messages"}, {"tool_calls"}, {"model"}, {"outcome"}, {"record"},
	{"trajectory_outcome"}, {"labels", "key_value", "key"}, {"labels", "key_value", "value"},
}

func newParquetWriter(out io.Writer) *parquetWriter {
	opts := []parquet.WriterOption{
		parquet.Compression(&parquet.Snappy),
		// What every common reader reads: version 1 data pages, PLAIN
		// byte arrays (parquet-go's default, DELTA_LENGTH_BYTE_ARRAY, and
		// version 2 pages are refused by @dsnp/parquetjs and others) and
		// RLE_DICTIONARY for the dict-tagged columns.
		parquet.DataPageVersion(1),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.MaxRowsPerRowGroup(int64(rowsPerGroup)),
		// No min and max in each page's header: they would copy whole
		// texts there, uncompressed (a 1 MiB message made a 28 MiB
		// file); readers find a page's bounds in the column index.
		parquet.DataPageStatistics(false),
		parquet.CreatedBy("cairn", version.String()+" ", version.Revision()), // the library writes "APP version V(build B)"
	}
	for _, c := range freeTextColumns {
		opts = append(opts, parquet.SkipPageBounds(c...))
	}
	return &parquetWriter{w: parquet.NewGenericWriter[StepRow](out, opts...)}
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// rowsOf returns t's rows.
func rowsOf(t *Trajectory, rows []StepRow) []StepRow {
	for i, s := range t.Steps {
		rows = append(rows, rowOf(t, i+1, s))
	}
	return rows
}

// rowOf returns the row of s, at 1-based position pos in t.
func rowOf(t *Trajectory, pos int, s Step) StepRow {
	row := StepRow{
		Trajectory: t.Session, Position: int32(pos),
		Session: s.Session, Step: int64(s.Number), ID: s.ID.String(),
		Time: s.Time.UTC(), Status: s.Status.String(),
		TrajectoryOutcome: strp(t.Outcome), TrajectoryReward: t.Reward,
		TrajectoryTruncated: t.Truncated,
	}
	if s.Parent != nil {
		row.Parent = strp(refName(*s.Parent))
		row.ParentID = strp(s.Parent.ID)
	}
	if s.Origin != nil {
		row.Origin = strp(refName(*s.Origin))
	}
	if len(s.Record) > 0 {
		row.Record = strp(string(s.Record))
	}
	if r := s.Rec; r != nil {
		row.Conventional = true
		if len(r.Messages) > 0 {
			main := r.Messages[len(r.Messages)-1]
			for _, m := range r.Messages {
				if m.Role == "assistant" {
					main = m
				}
			}
			row.Role, row.Content = strp(main.Role), &main.Content
			b, _ := textJSON(r.Messages)
			row.Messages = strp(string(b))
			var calls []any
			for _, m := range r.Messages {
				for _, tc := range m.ToolCalls {
					calls = append(calls, tc)
				}
			}
			if len(calls) > 0 {
				b, _ := textJSON(calls)
				row.ToolCalls = strp(string(b))
			}
		}
		row.Model = strp(r.Model)
		if r.Tokens != nil {
			p, c, k := r.Tokens.Prompt, r.Tokens.Completion, r.Tokens.Cached
			row.PromptTokens, row.CompletionTokens, row.CachedTokens = &p, &c, &k
		}
		row.CostUSD, row.LatencyMS, row.Reward = r.CostUSD, r.LatencyMS, r.Reward
		row.Labels = r.Labels
		row.Outcome = strp(r.Outcome)
	}
	return row
}

// noteBroken notes, in v, what breaks s's record.
func noteBroken(v *verdict, s Step) {
	if s.Broken != nil {
		_, reason := brokenReasons(s.Broken)
		v.leave(reason)
		v.explain(reason, fmt.Sprintf("%s: %v", s.Step, s.Broken))
	}
}

func (p *parquetWriter) Write(t *Trajectory) (verdict, error) {
	if t.long != nil {
		return p.writeLong(t)
	}
	var v verdict
	for _, s := range t.Steps {
		noteBroken(&v, s)
	}
	p.rows = rowsOf(t, p.rows[:0])
	err := p.write(p.rows)
	clear(p.rows)
	p.rows = p.rows[:0]
	return v, err
}

func (p *parquetWriter) Close() error { return p.w.Close() }

// writeLong writes the rows of a trajectory too long to hold (long.go),
// reading its steps again, oldest first. Rows go to the Parquet writer
// about holdSteps (or holdBytes) at a time, each Write ending where the
// one Write of the whole trajectory's rows would end a chunk (aligned),
// so the file is the same.
func (p *parquetWriter) writeLong(t *Trajectory) (verdict, error) {
	var v verdict
	l := t.long
	pos := 0
	var rowBytes int64
	flush := func() error {
		err := p.write(p.rows)
		clear(p.rows)
		p.rows, rowBytes = p.rows[:0], 0
		return err
	}
	unpaired, err := l.eachSettled(func(s Step) error {
		noteBroken(&v, s)
		pos++
		p.rows = append(p.rows, rowOf(t, pos, s))
		rowBytes += stepBytes(s.Step)
		if len(p.rows) < holdSteps && rowBytes < holdBytes || !p.aligned(len(p.rows)) {
			return nil
		}
		return flush()
	})
	if err == nil && len(p.rows) > 0 {
		err = flush()
	}
	if err == nil && pos != l.n {
		err = fmt.Errorf("read trajectory of %s again: %d steps, but %d the first time", l.head, pos, l.n)
	}
	t.unpaired = unpaired
	return v, err
}
