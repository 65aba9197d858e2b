/* A fixture for tests/unit/test_layers.sh (layers.h), never compiled: the call up. */
#include "layers.h"

int bottom_fn(void)
{
	return top_fn() - 1;
}
