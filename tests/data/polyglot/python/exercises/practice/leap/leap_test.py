import unittest

from leap import leap_year


class LeapTest(unittest.TestCase):
    def test_year_not_divisible_by_4(self):
        self.assertIs(leap_year(2015), False)

    def test_year_divisible_by_4(self):
        self.assertIs(leap_year(1996), True)

    def test_year_divisible_by_100_not_by_400(self):
        self.assertIs(leap_year(2100), False)

    def test_year_divisible_by_400(self):
        self.assertIs(leap_year(2000), True)
