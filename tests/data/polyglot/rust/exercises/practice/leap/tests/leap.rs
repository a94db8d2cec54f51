#[test]
fn year_not_divisible_by_4() {
    assert!(!leap::is_leap_year(2015));
}

#[test]
#[ignore]
fn year_divisible_by_100_not_by_400() {
    assert!(!leap::is_leap_year(2100));
}

#[test]
#[ignore]
fn year_divisible_by_400() {
    assert!(leap::is_leap_year(2000));
}
