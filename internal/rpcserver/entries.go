package rpcserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/rpc"
)

// entries is get_entries (pi 1.6): the session's entries in append order,
// in the session file's shape, only those after since when it is set;
// an unknown since is pi's "Entry not found".
func (c *conn) entries(ctx context.Context, cmd rpc.Command) (any, error) {
	since := cmd.Since
	sess, raw, err := c.sessionEntries(ctx)
	if err != nil {
		return nil, err
	}
	out := rpc.EntriesData{Entries: raw, LeafID: sess.LeafID()}
	if since != "" {
		i := slices.IndexFunc(sess.Entries, func(e session.Entry) bool { return e.ID == since })
		if i < 0 {
			//lint:ignore ST1005 pi 1.6's own message, which its clients show
			return nil, fmt.Errorf("Entry not found: %s", since)
		}
		out.Entries = raw[i+1:]
	}
	return out, nil
}

// tree is get_tree (pi 1.6): the entries as a tree by parentId, roots and
// children in append order.
func (c *conn) tree(ctx context.Context, _ rpc.Command) (any, error) {
	sess, raw, err := c.sessionEntries(ctx)
	if err != nil {
		return nil, err
	}
	out := rpc.TreeData{Tree: []*rpc.TreeNode{}, LeafID: sess.LeafID()}
	nodes := make(map[string]*rpc.TreeNode, len(sess.Entries))
	for i, e := range sess.Entries {
		nodes[e.ID] = &rpc.TreeNode{Entry: raw[i], Children: []*rpc.TreeNode{}}
	}
	for _, e := range sess.Entries {
		n := nodes[e.ID]
		if p, ok := nodes[e.ParentID]; ok && e.ParentID != "" && e.ParentID != e.ID {
			p.Children = append(p.Children, n)
			continue
		}
		out.Tree = append(out.Tree, n)
	}
	return out, nil
}

// sessionEntries reads the session (empty when it has no file yet) and
// its entries in the session file's shape.
func (c *conn) sessionEntries(ctx context.Context) (*session.Session, []json.RawMessage, error) {
	sess, err := c.b.LoadSession(ctx, c.b.SessionID())
	if err != nil {
		return nil, nil, err
	}
	sess = cmp.Or(sess, &session.Session{}) // none yet: empty
	raw := make([]json.RawMessage, len(sess.Entries))
	for i, e := range sess.Entries {
		if raw[i], err = json.Marshal(e); err != nil {
			return nil, nil, fmt.Errorf("entry %s: %w", e.ID, err)
		}
	}
	return sess, raw, nil
}
