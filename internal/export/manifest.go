package export

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
)

// ManifestVersion is the version of the export manifest format.
const ManifestVersion = 1

// ManifestHeader opens an export manifest: what was exported, from where
// and how.
type ManifestHeader struct {
	Version   int       `json:"version"`
	Format    string    `json:"format"`
	Output    string    `json:"output,omitempty"`
	Store     string    `json:"store,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// Args are the selectors as given on the command line.
	Args []string `json:"args,omitempty"`
	// Metadata is false when the lines were written without their
	// metadata object (Options.NoMetadata), so that a re-export of the
	// manifest's heads writes them alike; nil otherwise.
	Metadata *bool `json:"metadata,omitempty"`
}

// ManifestHead is one entry of an export manifest's heads: the step an
// exported trajectory ends at, how many steps the trajectory held and
// whether older history had been pruned away below them. A re-export
// (Options.FromHeads) checks the last two, so a history pruned, or a
// session removed, since the export fails it instead of yielding a
// shorter trajectory. A manifest written before they were recorded has
// Steps 0, and is re-exported without that check.
type ManifestHead struct {
	cairn.StepRef
	Steps     int  `json:"steps,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
}

// ManifestWriter streams an export manifest: the header, then one entry
// per exported session head (written as they come, so a manifest of
// 100,000 sessions is never held in memory), then the summary.
//
//	{"version":1,"format":...,"heads":[{"session":"a","step":7,"id":"...","steps":7},...],"summary":{...}}
//
// The heads pin the dataset: each head's hash fixes its whole path.
type ManifestWriter struct {
	bw    *bufio.Writer
	n     int
	first bool
}

// NewManifestWriter writes h to w and returns a writer for the heads.
func NewManifestWriter(w io.Writer, h ManifestHeader) (*ManifestWriter, error) {
	h.Version = ManifestVersion
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(w)
	bw.Write(b[:len(b)-1]) // drop the closing brace: heads follow
	_, err = bw.WriteString(`,"heads":[`)
	return &ManifestWriter{bw: bw, first: true}, err
}

// Add records one exported session head.
func (m *ManifestWriter) Add(r ManifestHead) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if !m.first {
		m.bw.WriteByte(',')
	}
	m.first = false
	m.bw.WriteByte('\n')
	m.n++
	_, err = m.bw.Write(b)
	return err
}

// Close writes the summary and flushes.
func (m *ManifestWriter) Close(s Summary) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(m.bw, "\n],\"summary\":%s}\n", b); err != nil {
		return err
	}
	return m.bw.Flush()
}

// ReadManifestHeads calls fn for each head listed in the export manifest
// read from r, decoding one at a time. The manifest is read to its end:
// one of another version, a preference export's (whose pairs are not
// re-exported), one with heads given twice, one cut short, or text after
// it (two manifests in one file) is refused rather than read in part.
func ReadManifestHeads(r io.Reader, fn func(ManifestHead) error) error {
	_, err := ReadManifest(r, fn)
	return err
}

// ReadManifest is ReadManifestHeads that also returns what the manifest
// says of how its lines were written: its format and metadata.
func ReadManifest(r io.Reader, fn func(ManifestHead) error) (ManifestHeader, error) {
	var h ManifestHeader
	return h, readManifest(r, &h, fn)
}

func readManifest(r io.Reader, hdr *ManifestHeader, fn func(ManifestHead) error) error {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("read export manifest: not a JSON object")
	}
	heads := false
	// A metadata of the wrong kind is said once the manifest is known
	// to have heads: a line of the export given as --heads instead of
	// its manifest has an object there, and no heads, the thing to say.
	var bad error
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("read export manifest: %w", err)
		}
		switch t {
		case "heads":
			if heads {
				return fmt.Errorf("read export manifest: heads given twice")
			}
			heads = true
			if err := readHeads(dec, fn); err != nil {
				return err
			}
			continue
		case "version", "format", "metadata":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("read export manifest: %w", err)
			}
			switch err := checkHeader(hdr, t.(string), v); {
			case err != nil && t != "metadata":
				return fmt.Errorf("read export manifest: %w", err)
			case err != nil && bad == nil:
				bad = fmt.Errorf("read export manifest: %w", err)
			}
			continue
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("read export manifest: %w", err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fmt.Errorf("read export manifest: %w", cutShort(err))
	}
	if !heads {
		return fmt.Errorf("read export manifest: no heads")
	}
	if bad != nil {
		return bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("read export manifest: text after its closing brace: give one manifest per file")
	}
	return nil
}

// readHeads reads a manifest's list of heads, calling fn for each.
func readHeads(dec *json.Decoder, fn func(ManifestHead) error) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return fmt.Errorf("read export manifest: heads is not a list")
	}
	for i := 1; dec.More(); i++ {
		var h ManifestHead
		if err := dec.Decode(&h); err != nil {
			return fmt.Errorf("read export manifest: head %d: %s", i, headProblem(err))
		}
		if err := checkHead(h); err != nil {
			if h.Session != "" {
				return fmt.Errorf("read export manifest: head %d (%s): %s", i, h, err)
			}
			return fmt.Errorf("read export manifest: head %d: %s", i, err)
		}
		if err := fn(h); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return fmt.Errorf("read export manifest: %w", cutShort(err))
	}
	return nil
}

// cutShort says an end of input where the manifest goes on as what it
// is: the manifest ends before its closing bracket or brace.
func cutShort(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// checkHeader checks a manifest's version, format or metadata, and keeps
// the last two in hdr: heads are read as this version writes them, and a
// preference export's heads are the branches of its pairs, which are not
// re-exported.
func checkHeader(hdr *ManifestHeader, key string, v json.RawMessage) error {
	switch key {
	case "version":
		if string(v) != strconv.Itoa(ManifestVersion) {
			return fmt.Errorf("version %s: this cairn reads export manifests of version %d", v, ManifestVersion)
		}
	case "format":
		if json.Unmarshal(v, &hdr.Format) == nil && hdr.Format == Preference {
			return errors.New("a preference export's manifest: preference pairs are not re-exported")
		}
	case "metadata":
		if err := json.Unmarshal(v, &hdr.Metadata); err != nil {
			return fmt.Errorf("metadata: want true or false, got %s", jsonKind(v))
		}
	}
	return nil
}

// The words for what each field of a manifest's head holds.
const (
	wantSession = "a session name"
	wantStep    = "a step number (a whole number, 1 or more)"
	wantID      = "the step's hash, 64 hex digits"
	wantSteps   = "the trajectory's number of steps, 1 or more"
)

// headProblem says why a head could not be decoded, in the manifest's
// words rather than the decoder's (which names Go types).
func headProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	// The head's fields are those of the StepRef it embeds: the
	// decoder names them "StepRef.step".
	field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
	switch field {
	case "":
		return "want an object of session, step and id, got " + te.Value
	case "session":
		return "session: want " + wantSession + ", got " + te.Value
	case "step":
		return "step: want " + wantStep + ", got " + te.Value
	case "id":
		return "id: want " + wantID + ", got " + te.Value
	case "steps":
		return "steps: want " + wantSteps + ", got " + te.Value
	}
	return field + ": unexpected " + te.Value
}

// checkHead says which field of a decoded head is missing or malformed.
func checkHead(h ManifestHead) error {
	switch {
	case h.Session == "":
		return errors.New("session: want " + wantSession)
	case h.Number == 0:
		return errors.New("step: want " + wantStep)
	case len(h.ID) != 64 || strings.Trim(h.ID, "0123456789abcdef") != "":
		return errors.New("id: want " + wantID)
	case h.Steps < 0:
		return errors.New("steps: want " + wantSteps)
	}
	return nil
}
