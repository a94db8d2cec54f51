#pragma once

namespace leap {

bool is_leap_year(int year);

}  // namespace leap
