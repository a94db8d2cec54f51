#pragma once

#include <string>

namespace reverse_string {

std::string reverse_string(const std::string& text);

}  // namespace reverse_string
