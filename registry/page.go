package registry

import (
	"fmt"
	"strings"
)

// A tool that shows a long text (read's file, web_fetch's page) shows it
// a window of lines at a time, bounded in lines and bytes, and tells the
// model the offset to continue from: the window is cut, and the sentence
// worded, here for both.

// Window is the lines of a text one call shows.
type Window struct {
	// Text is the lines shown, each as the tool renders it.
	Text string
	// First and Last are the 1-based lines shown (Last is First-1 when
	// there are none); Total is how many the text has.
	First, Last, Total int
	// Capped says that maxBytes ended the window before maxLines or the
	// end of the text did.
	Capped bool
}

// PageLines is the window of a text of total lines that starts at line
// offset (1-based; 0 or less: the first): at most maxLines lines, and no
// more than maxBytes of their entries, the first line always whole. entry
// renders line i (0-based). ok is false when offset is beyond the end (a
// text without lines has only offset 1): the tool says so in its words.
func PageLines(total, offset, maxLines, maxBytes int, entry func(i int) string) (w Window, ok bool) {
	if offset <= 0 {
		offset = 1
	}
	if offset > total && !(total == 0 && offset == 1) {
		return Window{}, false
	}
	var b strings.Builder
	w = Window{First: offset, Last: offset - 1, Total: total}
	for i := offset - 1; i < total && i < offset-1+maxLines; i++ {
		e := entry(i)
		if b.Len()+len(e) > maxBytes && i > offset-1 {
			w.Capped = true
			break
		}
		b.WriteString(e)
		w.Last = i + 1
	}
	w.Text = b.String()
	return w, true
}

// Next is the line to continue from, 0 when the window reaches the end.
func (w Window) Next() int {
	if w.Last < w.Total {
		return w.Last + 1
	}
	return 0
}

// ShowingLines tells the model which lines it was shown and where to
// continue: "Showing lines 1-2000 of 5000. Use offset=2001 to continue."
func ShowingLines(first, last, total int) string {
	return fmt.Sprintf("Showing lines %d-%d of %d. Use offset=%d to continue.", first, last, total, last+1)
}

// ContentSection is the text between "<content>\n" and "</content>" of
// what a tool renders for the model (all of it when there is no such
// section): the part its card shows.
func ContentSection(s string) string {
	if _, after, ok := strings.Cut(s, "<content>\n"); ok {
		s, _, _ = strings.Cut(after, "</content>")
	}
	return s
}
