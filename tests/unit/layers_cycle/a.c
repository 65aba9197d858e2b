/* A fixture for tests/unit/test_layers.sh (layers.h), never compiled. */
#include "layers.h"

int top_fn(void)
{
	return bottom_fn() + 1;
}
