/* Placeholder until this file is written; see csrc/include/mcpping.h. */
