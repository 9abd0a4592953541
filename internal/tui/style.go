package tui

import "github.com/charmbracelet/lipgloss"

// Styles of the message list and the status line.
var (
	userStyle     = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12"))
	errorStyle    = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	noteStyle     = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	thinkingStyle = lipgloss.NewStyle().Faint(true).Italic(true)
	toolStyle     = lipgloss.NewStyle().Foreground(lipgloss.Color("14"))
	okStyle       = lipgloss.NewStyle().Foreground(lipgloss.Color("10"))
	statusStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("11"))
	approveStyle  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("13"))
	addedStyle    = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	removedStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	inputStyle    = lipgloss.NewStyle().Border(lipgloss.NormalBorder(), true, false, false, false).
			BorderForeground(lipgloss.Color("8"))
)

// entryKind says how a message-list entry is drawn.
type entryKind int

const (
	entryUser entryKind = iota
	entryAssistant
	entryError
	entryNote
	// entryThinking is an assistant's thinking text, drawn dimmed.
	entryThinking
	// entryLive is the assistant message being streamed (entry.live).
	entryLive
	// entryTool is a tool call with its arguments and output (entry.tool).
	entryTool
)

// entry is one item of the message list. Live and tool entries point to
// state that later events change in place.
type entry struct {
	kind entryKind
	text string
	live *liveMessage
	tool *toolView
}

func (e entry) render(width int, expanded bool) string {
	text := e.text
	switch e.kind {
	case entryUser:
		text = userStyle.Render("› ") + text
	case entryError:
		text = errorStyle.Render(text)
	case entryNote:
		text = noteStyle.Render(text)
	case entryThinking:
		text = thinkingStyle.Render(text)
	case entryLive:
		return e.live.render(width)
	case entryTool:
		return e.tool.render(width, expanded)
	}
	return wrap(text, width)
}

// wrap fits text to the screen width (0: as it is).
func wrap(text string, width int) string {
	if width > 0 {
		return lipgloss.NewStyle().Width(width).Render(text)
	}
	return text
}
