package rpcserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/rpc"
)

// entryNotFound is pi's error for an unknown since, in its words.
func entryNotFound(id string) error {
	//lint:ignore ST1005 pi 1.6's own message, which its clients show
	return fmt.Errorf("Entry not found: %s", id)
}

// entries is get_entries (pi 1.6): the session's entries in append order,
// in the session file's shape, only those after since when it is set;
// an unknown since is pi's "Entry not found".
func entries(ctx context.Context, sb *client.Session, since string) (any, error) {
	sess, err := sb.LoadSession(ctx, sb.SessionID())
	if err != nil {
		return nil, err
	}
	out := rpc.EntriesData{Entries: []json.RawMessage{}}
	if sess == nil {
		if since != "" {
			return nil, entryNotFound(since)
		}
		return out, nil
	}
	all := sess.Entries
	if since != "" {
		i := slices.IndexFunc(all, func(e session.Entry) bool { return e.ID == since })
		if i < 0 {
			return nil, entryNotFound(since)
		}
		all = all[i+1:]
	}
	for _, e := range all {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("get_entries: entry %s: %w", e.ID, err)
		}
		out.Entries = append(out.Entries, b)
	}
	out.LeafID = sess.LeafID()
	return out, nil
}

// tree is get_tree (pi 1.6): the entries as a tree by parentId, roots and
// children in append order.
func tree(ctx context.Context, sb *client.Session) (any, error) {
	sess, err := sb.LoadSession(ctx, sb.SessionID())
	if err != nil {
		return nil, err
	}
	out := rpc.TreeData{Tree: []*rpc.TreeNode{}}
	if sess == nil {
		return out, nil
	}
	nodes := make(map[string]*rpc.TreeNode, len(sess.Entries))
	for _, e := range sess.Entries {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("get_tree: entry %s: %w", e.ID, err)
		}
		nodes[e.ID] = &rpc.TreeNode{Entry: b, Children: []*rpc.TreeNode{}}
	}
	for _, e := range sess.Entries {
		n := nodes[e.ID]
		if p, ok := nodes[e.ParentID]; ok && e.ParentID != "" && e.ParentID != e.ID {
			p.Children = append(p.Children, n)
			continue
		}
		out.Tree = append(out.Tree, n)
	}
	out.LeafID = sess.LeafID()
	return out, nil
}
