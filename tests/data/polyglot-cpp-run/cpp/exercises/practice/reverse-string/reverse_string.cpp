#include "reverse_string.h"

namespace reverse_string {

}  // namespace reverse_string
