package leap

import "testing"

func TestLeapYears(t *testing.T) {
	for _, tc := range testCases {
		if got := IsLeapYear(tc.year); got != tc.expected {
			t.Fatalf("IsLeapYear(%d) = %t, want %t", tc.year, got, tc.expected)
		}
	}
}
