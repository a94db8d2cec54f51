#include "leap.h"

namespace leap {

}  // namespace leap
