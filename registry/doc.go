// Package registry defines what a tool is: a typed definition (Add[In, Out]),
// its parameter schema and argument validation, the model-facing content it
// renders, and the presentation views (cards) it offers the editor. It never
// runs a tool by itself; package pipeline does.
package registry
