// Package leap decides leap years.
package leap

// IsLeapYear reports whether year is a leap year.
func IsLeapYear(year int) bool {
	panic("Please implement the IsLeapYear function")
}
