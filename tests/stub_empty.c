/* stub_empty.c: keeps a verbs library non-empty while its part has no verbs yet. */
typedef int vgt_translation_unit_not_empty;
