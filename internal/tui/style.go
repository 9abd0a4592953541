package tui

import "github.com/charmbracelet/lipgloss"

// Styles of the message list and the status line.
var (
	userStyle   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12"))
	errorStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	noteStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	statusStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("11"))
	inputStyle  = lipgloss.NewStyle().Border(lipgloss.NormalBorder(), true, false, false, false).
			BorderForeground(lipgloss.Color("8"))
)

// entryKind says how a message-list entry is drawn.
type entryKind int

const (
	entryUser entryKind = iota
	entryAssistant
	entryError
	entryNote
)

// entry is one item of the message list.
type entry struct {
	kind entryKind
	text string
}

func (e entry) render(width int) string {
	text := e.text
	switch e.kind {
	case entryUser:
		text = userStyle.Render("› ") + text
	case entryError:
		text = errorStyle.Render(text)
	case entryNote:
		text = noteStyle.Render(text)
	}
	if width > 0 {
		return lipgloss.NewStyle().Width(width).Render(text)
	}
	return text
}
