package export

import (
	"errors"
	"fmt"
	"strings"
)

// MaxNoteNames bounds the session names a Note keeps.
const MaxNoteNames = 10

// Note is one reason an export skipped trajectories or left something
// out of them, with the sessions (heads of trajectories) it concerns.
type Note struct {
	// Reason says what and why, in the user's words.
	Reason string `json:"reason"`
	// Sessions counts the trajectories concerned.
	Sessions int64 `json:"sessions"`
	// Names are the first MaxNoteNames of their sessions, in export order.
	Names []string `json:"names"`
	// Example is the first case in detail (e.g. the step and how its
	// record breaks the convention), if there is more to say.
	Example string `json:"example,omitempty"`
}

// String renders n for a person: "1 session (s3)".
func (n Note) String() string {
	what := fmt.Sprintf("%d session", n.Sessions)
	if n.Sessions != 1 {
		what += "s"
	}
	names := strings.Join(n.Names, ", ")
	if more := n.Sessions - int64(len(n.Names)); more > 0 {
		names += fmt.Sprintf(" and %d more", more)
	}
	s := fmt.Sprintf("%s with %s: %s", what, n.Reason, names)
	if n.Example != "" {
		s += " (first: " + n.Example + ")"
	}
	return s
}

// Reasons a trajectory is skipped or loses something in a format.
const (
	reasonNoMessages         = "no chat messages in the steps' records (export reads each step's record, cairn commit --record, not its state: docs/records.md)"
	reasonRawOnly            = "raw records only (not following docs/records.md), so no chat messages"
	reasonBroken             = "records that use docs/records.md's keys with the wrong shape, so their messages cannot be read"
	reasonResultWithoutCall  = "a tool result that follows no tool call (OpenAI's format wants each right after the assistant message that made its call; ShareGPT would make it the user's words)"
	reasonUnansweredCall     = "a tool call that no tool result answers before the conversation goes on (OpenAI's format wants every call of an assistant message answered by the tool messages right after it)"
	reasonUnansweredLast     = "the last assistant message left out: it called a tool the trajectory holds no result for (the session ended, or was forked, before the tool answered), and OpenAI's format wants every call answered"
	reasonNoAssistantMessage = "no assistant message (OpenAI's format learns from the assistant's messages, and refuses an example without one)"
	reasonResultForNoCall    = "a tool result whose tool_call_id no call of the assistant message before it has, or names a call another result answered already (OpenAI's format refuses it; sharegpt and atif keep it)"
	reasonToolName           = "a tool's function name OpenAI's format refuses: it wants 1 to 64 ASCII letters, digits, '_' or '-' in each tool definition and tool call (sharegpt, atif and parquet keep the name)"
	reasonNoStateMessages    = "sessions of a framework adapter (LangGraph, ADK) whose state holds no conversation yet (a graph without a messages channel, a session without events), so no messages (docs/export.md#sessions-of-framework-adapters)"
	reasonNoBranchAnswer     = "a judged branch with no assistant message after the fork point, so no answer of the model's to prefer, and it is not paired"
	reasonRawLeftOut         = "raw records (not following docs/records.md) left out, as the format has no place for them"
	reasonRecordText         = "raw records holding what JSON readers refuse or misread (a number too large for a double, half of a UTF-16 surrogate pair, a member name twice), carried as text in extra.record_text"
	reasonBrokenRaw          = "records that use docs/records.md's keys with the wrong shape, carried only as raw JSON"
	reasonStateChat          = "sessions of a framework adapter (LangGraph, ADK) whose conversation cannot be read from their state (docs/export.md#sessions-of-framework-adapters)"
	reasonStateChatRaw       = "sessions of a framework adapter (LangGraph, ADK) whose conversation cannot be read from their state, carried only as raw records"
	reasonNoATIFSteps        = "no records, so no ATIF steps (an ATIF trajectory needs one; export reads each step's record, cairn commit --record, not its state: docs/records.md)"
	reasonUnmatchedResult    = "tool results for a call not on the path, kept without a source_call_id (ATIF ties a result to a call of its own step)"
	reasonUnpairedResult     = "a tool result without a tool_call_id that no call is left for (the assistant message before it made none, or its calls are answered), kept unpaired"
	reasonPrunedPrompt       = "pairs whose prompt starts part-way: the history before it was pruned (cairn prune)"
	reasonPrunedBranch       = "a branch after a fork point partly pruned (cairn prune), so it cannot be paired"
	reasonForkCollected      = "an outcome or reward, whose older history was pruned (cairn prune) and collected (cairn gc) up to the oldest kept step, so where it was forked, if it is a fork, can no longer be read, and it is not paired"
	reasonUnjudged           = "the newest outcome or reward in a record of the wrong shape, so the trajectory has none (an older one does not stand in for it)"
	reasonUnranked           = "a branch whose newest outcome cannot rank it (not success or failure or a synonym, docs/export.md, or in a record of the wrong shape) and no reward beside it, so it is not paired"
	reasonPruned             = "older history pruned (cairn prune), so the trajectory starts part-way; it is marked truncated"
	// ShareGPT, as LLaMA-Factory reads it.
	reasonStartsWithGPT = "a conversation that starts with the assistant (LLaMA-Factory's ShareGPT reader wants a user or tool turn first)"
	reasonNoAnswer      = "no assistant turn (a ShareGPT conversation ends with the assistant)"
	reasonTextBeside    = "assistant text beside tool calls left out (a ShareGPT function_call turn holds only the calls)"
	reasonReasoning     = "reasoning left out (a ShareGPT turn has no place for it; openai-jsonl and atif carry it)"
	reasonTrailing      = "trailing user or tool turns left out (a ShareGPT conversation ends with the assistant)"
)

// verdict is what a writer did with a trajectory: skipped it (skip set)
// or wrote it, leaving out what leftOut says.
type verdict struct {
	skip    string
	leftOut []string
	// example details the first case of skip or leftOut, if any.
	example map[string]string
}

func (v *verdict) leave(reason string) {
	for _, r := range v.leftOut {
		if r == reason {
			return
		}
	}
	v.leftOut = append(v.leftOut, reason)
}

func (v *verdict) explain(reason, example string) {
	if v.example == nil {
		v.example = map[string]string{}
	}
	if _, ok := v.example[reason]; !ok {
		v.example[reason] = example
	}
}

// addNote counts session under reason in notes, keeping first-seen order.
func addNote(notes []Note, reason, session, example string) []Note {
	for i := range notes {
		if notes[i].Reason == reason {
			notes[i].Sessions++
			if len(notes[i].Names) < MaxNoteNames {
				notes[i].Names = append(notes[i].Names, session)
			}
			return notes
		}
	}
	return append(notes, Note{Reason: reason, Sessions: 1, Names: []string{session}, Example: example})
}

// brokenReasons returns the reasons a step's Step.Broken is said under:
// skip by the chat formats, which then skip the trajectory, and raw by
// the others, which carry the step's record raw.
func brokenReasons(broken error) (skip, raw string) {
	var sc *stateChatError
	if errors.As(broken, &sc) {
		return reasonStateChat, reasonStateChatRaw
	}
	return reasonBroken, reasonBrokenRaw
}
