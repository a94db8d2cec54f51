pub fn is_leap_year(year: u64) -> bool {
    todo!("true if {year} is a leap year")
}
