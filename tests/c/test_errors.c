/* Error names and sentences come from the one list (MCPP_ERRNO_MAP): every
 * code has both, each name is its enum's, and unknown codes say so. */
#include <string.h>

#include "mcpping.h"
#include "task.h"

TEST(errors_every_code_of_the_list_has_its_name_and_sentence) {
  int n = 0;
#define XX(name, code, text)                                 \
  ASSERT_STR_EQ(mcpp_errname(code), "MCPP_ERR_" #name);      \
  ASSERT_STR_EQ(mcpp_strerror(code), text);                  \
  ASSERT_EQ(MCPP_ERR_##name, code);                          \
  n++;
  MCPP_ERRNO_MAP(XX)
#undef XX
  ASSERT_EQ(n, -(MCPP_ERR_LAST_ + 1));
  /* MCPP_ERR_LAST_ is counted from the list: its codes leave no gap. */
  for (int c = -1; c > MCPP_ERR_LAST_; c--)
    ASSERT(strcmp(mcpp_errname(c), "MCPP_ERR_UNKNOWN") != 0);
  ASSERT_STR_EQ(mcpp_errname(0), "MCPP_OK");
  ASSERT_STR_EQ(mcpp_errname(MCPP_ERR_LAST_), "MCPP_ERR_UNKNOWN");
  ASSERT_STR_EQ(mcpp_strerror(1), "Unknown error.");
  ASSERT_STR_EQ(mcpp_strerror(MCPP_ERR_CLOSED), "The connection is closing or closed.");
}
