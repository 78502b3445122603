"""[mem:<id>] citations: invented ids stripped from text and lists, cited ids deduplicated in order."""

from __future__ import annotations

from zengram.memory.domain.citations import CitationChecker, citations_in, strip_unknown_citations

A = "0b7c1f2e-1111-4a4a-9a9a-000000000001"
B = "0b7c1f2e-2222-4a4a-9a9a-000000000002"
INVENTED = "99999999-9999-4999-8999-999999999999"


def checker() -> CitationChecker:
    return CitationChecker([A, B])


def test_finds_every_citation_in_order_as_written() -> None:
    text = f"Deploys broke [mem:{B}] twice [mem:{A}][mem:{B}] and once more [mem:{INVENTED}]."
    assert citations_in(text) == [B, A, B, INVENTED]


def test_reads_loose_forms_of_citations() -> None:
    assert citations_in(f"x [MEM: {A}] y [mem:{A}, mem:{B}] z [mem:{B}; {A}]") == [A, A, B, B, A]


def test_text_without_citations_has_none() -> None:
    assert citations_in("no [citation] here, nor [mem] nor mem:abc") == []


def test_keeps_citations_of_analysed_memories() -> None:
    text = f"Deploys fail on Fridays [mem:{A}]."
    assert checker().clean(text) == text


def test_strips_an_invented_citation_and_the_space_before_it() -> None:
    assert checker().clean(f"Deploys fail on Fridays [mem:{INVENTED}].") == "Deploys fail on Fridays."
    assert checker().clean(f"[mem:{INVENTED}] Deploys fail") == "Deploys fail"


def test_keeps_the_known_ids_of_a_bracket_with_several() -> None:
    assert checker().clean(f"Both agree [mem:{A}, mem:{INVENTED}; {B}].") == f"Both agree [mem:{A}] [mem:{B}]."


def test_rewrites_an_upper_cased_id_in_its_stored_spelling() -> None:
    assert checker().clean(f"Noted [MEM:{A.upper()}]") == f"Noted [mem:{A}]"


def test_a_list_loses_invented_citations_and_entries_left_empty() -> None:
    entries = [f"Pattern one [mem:{A}]", f"[mem:{INVENTED}]", f"Pattern two [mem:{INVENTED}]", ""]
    assert checker().clean_all(entries) == [f"Pattern one [mem:{A}]", "Pattern two"]


def test_cited_ids_are_deduplicated_in_order_of_first_appearance() -> None:
    texts = [f"one [mem:{B}]", f"two [mem:{INVENTED}] [mem:{A}]", f"three [mem:{B}] [mem:{A.upper()}]"]
    assert checker().cited_ids(texts) == [B, A]


def test_known_ids_filters_and_deduplicates_a_list_of_ids() -> None:
    assert checker().known_ids([INVENTED, B, B, A.upper(), " " + A]) == [B, A]


def test_nothing_analysed_means_every_citation_is_invented() -> None:
    empty = CitationChecker([])
    assert empty.clean(f"claim [mem:{A}]") == "claim"
    assert empty.cited_ids([f"claim [mem:{A}]"]) == []


def test_strip_unknown_citations_cleans_one_text_and_names_its_cited_ids() -> None:
    text = f"A [mem:{B}] then B [mem:{INVENTED}] and A again [mem:{B}] [mem:{A}]"
    assert strip_unknown_citations(text, {A, B}) == (f"A [mem:{B}] then B and A again [mem:{B}] [mem:{A}]", [B, A])
