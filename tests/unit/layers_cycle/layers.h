/* A fixture for tests/unit/test_layers.sh, never compiled: b.c calls up into a.c, which the
 * check must refuse.
 * Layers, top to bottom:
 *   a.c b.c
 */
int top_fn(void);
int bottom_fn(void);
