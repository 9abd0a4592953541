package compaction

import "unicode/utf8"

// charsPerToken is the estimate's ratio: about four characters a token for
// English text and code. It errs high for most tokenizers, which is the
// safe side for deciding when to compact.
const charsPerToken = 4

// EstimateItem is the item's token count: Item.Tokens when positive,
// otherwise ceil(chars/4) over everything the message sends to the model:
// text, thinking, and each tool call's name and arguments. The characters
// are summed before rounding, so a message is rounded once.
func EstimateItem(it Item) int {
	if it.Tokens > 0 {
		return it.Tokens
	}
	n := utf8.RuneCountInString(it.Text) + utf8.RuneCountInString(it.Thinking)
	for _, tc := range it.ToolCalls {
		n += utf8.RuneCountInString(tc.Name) + utf8.RuneCount(tc.Arguments)
	}
	return (n + charsPerToken - 1) / charsPerToken
}

// EstimateContext is the size of the context the items make up. When
// lastUsage anchors real usage to the assistant message at index k, the
// answer is that usage plus the estimates of the items after k (the
// provider's count is better than any estimate of the items it covered).
// Otherwise (nil anchor, index out of range, or zero usage, as on an
// aborted or failed call) it is the sum of the items' estimates.
func EstimateContext(items []Item, lastUsage *UsageAnchor) int {
	from, total := 0, 0
	if lastUsage != nil && lastUsage.Index >= 0 && lastUsage.Index < len(items) && lastUsage.Tokens() > 0 {
		from, total = lastUsage.Index+1, lastUsage.Tokens()
	}
	for _, it := range items[from:] {
		total += EstimateItem(it)
	}
	return total
}
