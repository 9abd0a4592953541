package tui

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/internal/client"
)

// Run shows the chat of backend's session on a terminal (in and out are
// normally stdin and stdout) until the user quits or ctx ends. A prompt
// still running is detached: it keeps running in Temporal, and Run says so
// on out after leaving the screen.
func Run(ctx context.Context, backend *client.Session, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, backend, Options{})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	final, err := p.Run()
	cancel()
	if fm, ok := final.(*Model); ok && fm.prompt != nil {
		fmt.Fprintf(out, "Detached: the prompt keeps running in Temporal; follow it with: starter events --session %s --follow (or starter chat --session %[1]s)\n",
			backend.SessionID())
	}
	if errors.Is(err, tea.ErrProgramKilled) {
		return nil // ctx ended (SIGINT, SIGTERM): a normal way out
	}
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	return nil
}
