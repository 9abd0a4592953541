package session

import (
	"slices"
	"sync"

	"github.com/durableagent/durableagent/agent"
)

// Session is one session as read by Load: its header, its valid entries in
// file order, and warnings about lines that were skipped (for example
// "line 7: not JSON, skipped").
//
// Get, Branch and Context index Entries on first use; modify Entries only
// before calling them.
type Session struct {
	Header   Header
	Entries  []Entry
	Warnings []string

	indexed sync.Once
	byID    map[string]int // entry ids to positions in Entries
}

func (s *Session) index() map[string]int {
	s.indexed.Do(func() {
		s.byID = make(map[string]int, len(s.Entries))
		for i, e := range s.Entries {
			if _, dup := s.byID[e.ID]; !dup { // the first one counts, as in the file
				s.byID[e.ID] = i
			}
		}
	})
	return s.byID
}

// Get returns the entry with the given id.
func (s *Session) Get(id string) (Entry, bool) {
	i, ok := s.index()[id]
	if !ok {
		return Entry{}, false
	}
	return s.Entries[i], true
}

// LeafID returns the id of the last entry in file order that no other
// entry names as its parent, "" if there is none. It is the leaf of the
// branch written last, which is where a resumed conversation continues.
// Tool results of one batch are written in parallel, so their file order
// may differ from their chain order; skipping entries that have a child
// finds the end of the chain all the same.
func (s *Session) LeafID() string {
	if len(s.Entries) == 0 {
		return ""
	}
	last := s.Entries[len(s.Entries)-1]
	parents := make(map[string]struct{}, len(s.Entries))
	for _, e := range s.Entries {
		if e.ParentID != "" {
			parents[e.ParentID] = struct{}{}
		}
	}
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if _, isParent := parents[s.Entries[i].ID]; !isParent {
			return s.Entries[i].ID
		}
	}
	return last.ID // every entry has a child: a cycle in a damaged file
}

// Branch returns the path from the root to leafID, following ParentID. The
// walk stops at a parent that is not in the session (so a damaged file still
// yields the recent part of the branch) and at a cycle. An unknown leafID
// gives nil.
//
// Entries that are not on the path are not returned even though the file
// keeps them: a failed assistant message dropped before a retry is a sibling
// of the retried answer, not its parent.
func (s *Session) Branch(leafID string) []Entry {
	idx := s.index()
	var path []Entry
	visited := make(map[string]struct{})
	for i, ok := idx[leafID]; ok; {
		e := s.Entries[i]
		if _, seen := visited[e.ID]; seen {
			break // a damaged file whose parent links loop
		}
		visited[e.ID] = struct{}{}
		path = append(path, e)
		if e.ParentID == "" {
			break
		}
		i, ok = idx[e.ParentID]
	}
	slices.Reverse(path)
	return path
}

// RunContext is the run context of a model call, entry by entry: what
// Session.Context returns as messages, with the entries' ids (the
// compaction planner needs them). It is built in one place, RunContext,
// so every reader agrees on what a compaction keeps.
type RunContext struct {
	// Compaction is the last compaction entry on the branch; nil when the
	// branch has none. Its Summary stands in for every message before Kept.
	Compaction *Entry
	// Kept are the message entries the compaction kept verbatim: from its
	// FirstKeptEntryID up to the compaction (none when that id is not on
	// the branch before it).
	Kept []Entry
	// After are the message entries after the compaction; without one,
	// every message entry of the branch.
	After []Entry
}

// RunContext returns the run context of a model call whose branch ends at
// leafID (see Context).
func (s *Session) RunContext(leafID string) RunContext {
	path := s.Branch(leafID)
	last := -1
	for i, e := range path {
		if e.Type == TypeCompaction {
			last = i
		}
	}
	if last < 0 {
		return RunContext{After: messageEntries(path)}
	}
	c := path[last]
	first := slices.IndexFunc(path[:last], func(e Entry) bool { return e.ID == c.FirstKeptEntryID })
	if first < 0 {
		first = last
	}
	return RunContext{Compaction: &c, Kept: messageEntries(path[first:last]), After: messageEntries(path[last+1:])}
}

// Messages returns the run context as messages, oldest first: the
// compaction's summary as a RoleSummary message, then the kept messages,
// then the later ones.
func (rc RunContext) Messages() []agent.Message {
	out := make([]agent.Message, 0, len(rc.Kept)+len(rc.After)+1)
	if c := rc.Compaction; c != nil {
		summary := agent.TextMessage(agent.RoleSummary, c.Summary)
		summary.TokensBefore = c.TokensBefore
		if !c.Timestamp.IsZero() {
			summary.Timestamp = c.Timestamp.UnixMilli()
		}
		out = append(out, summary)
	}
	for _, es := range [][]Entry{rc.Kept, rc.After} {
		for _, e := range es {
			out = append(out, *e.Message)
		}
	}
	return out
}

// Context returns the messages that form the run context of a model call
// whose branch ends at leafID.
//
// Without a compaction on the branch, that is every message entry on it.
// With one, the last compaction on the branch wins: the context is a
// RoleSummary message holding its summary, then the message entries from
// its FirstKeptEntryID up to the compaction, then every message entry after
// it. If FirstKeptEntryID is not on the branch before the compaction,
// nothing before the compaction is kept besides the summary.
//
// Assistant messages that ended with StopReason "error" or "aborted" are
// returned like any other message, even with no content: whether a provider
// may receive them is the provider layer's decision, and a message the
// workflow has dropped from the run context is already off the branch.
func (s *Session) Context(leafID string) []agent.Message {
	return s.RunContext(leafID).Messages()
}

// messageEntries keeps the message entries (with a message) of entries.
func messageEntries(entries []Entry) []Entry {
	var out []Entry
	for _, e := range entries {
		if e.Type == TypeMessage && e.Message != nil {
			out = append(out, e)
		}
	}
	return out
}

// Name returns the session's display name: the name of the last
// session_info entry in the file ("" when there is none, or it cleared
// the name), as the terminal agent reads it.
func (s *Session) Name() string {
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if s.Entries[i].Type == TypeSessionInfo {
			return s.Entries[i].Name
		}
	}
	return ""
}

// BranchSettings are the model and thinking level a session's branch
// chose with model_change and thinking_level_change entries.
type BranchSettings struct {
	// Provider and Model are the last model_change's ("" when none).
	Provider, Model string
	// ThinkingLevel is the last thinking_level_change's ("" when none).
	ThinkingLevel string
}

// BranchSettings returns the settings chosen on the branch that ends at
// leafID. Unlike the terminal agent, an assistant message does not choose
// the model: a session without model_change follows model.provider and
// model.name.
func (s *Session) BranchSettings(leafID string) BranchSettings {
	var b BranchSettings
	for _, e := range s.Branch(leafID) {
		switch e.Type {
		case TypeModelChange:
			b.Provider, b.Model = e.Provider, e.ModelID
		case TypeThinkingLevelChange:
			b.ThinkingLevel = e.ThinkingLevel
		}
	}
	return b
}
