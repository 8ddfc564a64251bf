// Package shapes measures plane figures.
package shapes

import (
	"fmt"
	"math"
)

// Shape is a plane figure.
type Shape interface {
	Area() float64
	String() string
}

// Circle is a circle of radius R.
type Circle struct {
	R float64
}

// Rect is a rectangle.
type Rect struct {
	W, H float64
}

// Area of the circle.
func (c Circle) Area() float64 {
	return math.Pi * c.R * c.R
}

func (c Circle) String() string {
	return fmt.Sprintf("circle(%g)", c.R)
}

func (r *Rect) Area() float64 {
	return r.W * r.H
}

func (r *Rect) String() string {
	return fmt.Sprintf("rect(%gx%g)", r.W, r.H)
}

// Scale grows the rectangle in place.
func (r *Rect) Scale(by float64) {
	r.W *= by
	r.H *= by
}

// List holds shapes of one kind.
type List[T Shape] struct {
	items []T
}

func (l *List[T]) Push(item T) {
	l.items = append(l.items, item)
}

func (List[T]) Kind() string { return "list" }

// Total is the summed area of the shapes.
func Total(shapes ...Shape) float64 {
	sum := 0.0
	for _, s := range shapes {
		sum += s.Area()
	}
	return sum
}
