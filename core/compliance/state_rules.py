"""The state rows: every US state whose telephone-solicitation law is stricter than the federal rule (47 CFR
64.1200(c)(1), 08:00-21:00 callee-local) in at least one of: a narrower window, a closed Saturday or Sunday, closed
legal holidays, or a cap on calls to one person per 24 hours. A state not listed here has only the federal window.

How the rows were read (each row's trailing comment gives the facts and any doubt):

- Windows are [start, end) in the callee's local time; `saturday`/`sunday` None closes the whole day; a holiday is
  the `holidays` package's calendar for the state (core.compliance.decision), so `holidays_closed` is the
  strict reading where a state's own list differs.
- The platform's calls speak in an AI (artificial, synthesized) voice (FCC 24-17), so a state's rule for automated
  or prerecorded-voice calls (ADAD, autodialer) is applied to every call here, marked "automated" below. Where a
  state has both a general and an automated rule, the row is the stricter of the two, for texts too when the row
  covers texts (one window a row). A row whose only rule is for automated calls is CALLS_ONLY.
- `channels` is CALLS_AND_TEXTS only where the statute's definition of a solicitation reaches text messages.
- Where sources conflict, the stricter reading is encoded and the comment says so; a law already enacted but not yet
  in force is encoded now when it is stricter (Pennsylvania).
- Sources: the statute or rule text where it could be read (state code sites, casetext, justia, lawserver), with law
  firm and compliance-vendor summaries as corroboration. Not legal advice: counsel should confirm the rows.
"""
from core.compliance.rules import CALLS_AND_TEXTS, CALLS_ONLY, StateRule, hours

STATE_RULES: tuple[StateRule, ...] = (
    # (1)(b) automated calls, (2)(b) live calls: "No solicitation calls are allowed on Sundays or holidays."
    StateRule("AL", "Ala. Admin. Code r. 770-X-5-.17(1)(b), (2)(b)", CALLS_ONLY, hours(8, 20), hours(8, 20), None,
              holidays_closed=True),  # 8am-8pm Mon-Sat; none on Sundays or state holidays
    StateRule("CA", "Cal. Pub. Util. Code § 2872(c)", CALLS_ONLY, hours(9, 21), hours(9, 21),
              hours(9, 21)),  # automated (ADAD, prerecorded message): none 9pm-9am; live calls federal
    # 2023 P.A. 23-98 brought text and media messages into "telephonic sales call"; older tables say 9am-9pm.
    StateRule("CT", "Conn. Gen. Stat. § 42-288a(c)", CALLS_AND_TEXTS, hours(9, 20), hours(9, 20),
              hours(9, 20)),  # 9am-8pm every day (stricter of the two readings)
    StateRule("FL", "Fla. Stat. § 501.616(6)", CALLS_AND_TEXTS, hours(8, 20), hours(8, 20), hours(8, 20),
              max_calls_per_24h=3),  # 8am-8pm; at most 3 per 24h on the same subject (FTSA covers texts)
    # 815 ILCS 413/15 (live calls) is the federal 8am-9pm; the Automatic Telephone Dialers Act is narrower.
    StateRule("IL", "815 ILCS 305/15(a)", CALLS_ONLY, hours(9, 21), hours(9, 21),
              hours(9, 21)),  # automated (autodialer with a recorded message): none 9pm-9am
    # Window from a secondary source (a state table citing the section); IC 24-4.7 has no hours of its own.
    StateRule("IN", "Ind. Code § 24-5-14-8", CALLS_ONLY, hours(9, 20), hours(9, 20),
              hours(9, 20)),  # automated (ADAD): 9am-8pm; live calls federal
    StateRule("KY", "KRS § 367.46955(16)", CALLS_ONLY, hours(10, 21), hours(10, 21),
              hours(10, 21)),  # 10am-9pm every day (latest start of any state)
    # "telephonic solicitation" is "any voice or data communication"; the PSC's emergency bans cover texts too.
    StateRule("LA", "LPSC Gen. Order R-29617 § V(A); La. R.S. 45:844.11 et seq.", CALLS_AND_TEXTS, hours(8, 20),
              hours(8, 20), None, holidays_closed=True),  # 8am-8pm Mon-Sat; none on Sundays or legal holidays
    StateRule("MA", "M.G.L. c. 159C, § 3; 201 CMR 12.02(2)", CALLS_ONLY, hours(8, 20), hours(8, 20),
              hours(8, 20)),  # none 8pm-8am every day; 201 CMR 12.02(4) also bars recorded-message sales calls
    # The brief cited § 14-4503; the hours and the cap are in § 14-4502(c) (Stop the Spam Calls Act of 2023).
    StateRule("MD", "Md. Code, Com. Law § 14-4502(c)", CALLS_AND_TEXTS, hours(8, 20), hours(8, 20), hours(8, 20),
              max_calls_per_24h=3),  # 8am-8pm; at most 3 calls or texts per 24h on the same subject
    # "not more than one solicitation call to any telephone number during each 8-hour period" inside a 9-5
    # window: a 24h cap cannot say 1 per 8h, so 1 per 24h (the strict reading).
    StateRule("ME", "10 M.R.S. § 1498(3)", CALLS_ONLY, hours(9, 17), None, None,
              max_calls_per_24h=1),  # automated: weekdays 9am-5pm only; 1 call per 8h; live calls federal
    # A criminal harassment statute ("unsolicited commercial telephone call ... between 9 p.m. and 9 a.m.");
    # whether it needs intent to annoy is arguable, so it is applied (stricter reading).
    StateRule("MI", "Mich. Comp. Laws § 750.540e(1)(f)", CALLS_ONLY, hours(9, 21), hours(9, 21),
              hours(9, 21)),  # none 9pm-9am every day
    StateRule("MN", "Minn. Stat. § 325E.30", CALLS_ONLY, hours(9, 21), hours(9, 21),
              hours(9, 21)),  # "time of day limit": none before 9am or after 9pm (residential subscribers)
    # The statute says 8am-8pm "Central Standard Time"; read as CST during daylight time that is 9am-9pm CDT,
    # so the window both readings allow year-round is 9am-8pm. The legal-holiday ban (PSC rule) was repealed
    # in 2023-24; definitions (§ 77-3-705) cover texts.
    StateRule("MS", "Miss. Code Ann. § 77-3-723(1)", CALLS_AND_TEXTS, hours(9, 20), hours(9, 20),
              None),  # 8am-8pm CST (9am-8pm local encoded), none on Sundays
    StateRule("NM", "N.M. Stat. Ann. § 57-12-22(B)(5)", CALLS_ONLY, hours(9, 21), hours(9, 21),
              hours(9, 21)),  # none received before 9am or after 9pm, every day
    # NRS 597.814(2)(a) (automated, read): none 9pm-9am; NRS 598.0918(3) (secondary sources, covers "telephone or
    # text message"): none 8pm-9am. Vendor tables agree on 9am-8pm; the stricter window is encoded.
    StateRule("NV", "NRS 598.0918(3); NRS 597.814(2)(a)", CALLS_AND_TEXTS, hours(9, 20), hours(9, 20),
              hours(9, 20)),  # 9am-8pm every day
    # § 775C.4 (Telephone Solicitation Act of 2022): 8am-8pm, 3 per 24h, covers texts. § 755.1(C)(2)(a): an
    # automatic dial announcing device (prerecorded or synthesized voice) not before 9am; both apply to AI calls.
    StateRule("OK", "Okla. Stat. tit. 15, §§ 775C.4, 755.1(C)(2)", CALLS_AND_TEXTS, hours(9, 20), hours(9, 20),
              hours(9, 20), max_calls_per_24h=3),  # 9am-8pm (8am for live-only calls); at most 3 per 24h
    # HB 3865 (Or. Laws 2025, ch. 580), in force 2026-01-01: text messages are telephone solicitations.
    StateRule("OR", "ORS 646.563(1)(b)", CALLS_AND_TEXTS, hours(8, 20), hours(8, 20), hours(8, 20),
              max_calls_per_24h=3),  # 8am-8pm; at most 3 per 24h (except an 18-month business relationship)
    # Today 8am-9pm (§ 2245(a)(1)) plus no legal holidays (§ 2245(a)(10), Act 73 of 2019). Act 47 of 2026 (SB 992,
    # approved 2026-07-20, in force 90 days later, ~2026-10-18) bars Sundays and 7pm-9am and adds texts; encoded
    # now as the stricter rule.
    StateRule("PA", "73 P.S. § 2245(a)(1), (10) (as amended by Act 47 of 2026)", CALLS_AND_TEXTS, hours(9, 19),
              hours(9, 19), None, holidays_closed=True),  # 9am-7pm Mon-Sat; none on Sundays or legal holidays
    StateRule("RI", "R.I. Gen. Laws §§ 5-61-3.6, 5-61-2(2)", CALLS_ONLY, hours(9, 18), hours(10, 17), None,
              holidays_closed=True),  # 9am-6pm Mon-Fri, 10am-5pm Sat; none on Sundays or state/federal holidays
    # § 37-30-28 (read): an automated telephone dialing system only "weekdays between 9 a.m. and 9 p.m.".
    # § 37-30A-3(2) (secondary source): live calls 9am-9pm, none on Sundays.
    StateRule("SD", "SDCL §§ 37-30-28, 37-30A-3(2)", CALLS_ONLY, hours(9, 21), None,
              None),  # automated: weekdays 9am-9pm only (live calls also Sat 9am-9pm)
    # SB 140 (2025) brought text and image messages into "telephone solicitation"; texts keep these hours.
    StateRule("TX", "Tex. Bus. & Com. Code § 301.051", CALLS_AND_TEXTS, hours(9, 21), hours(9, 21),
              hours(12, 21)),  # 9am-9pm Mon-Sat; noon-9pm Sunday
    # "between the hours of 9 p.m. and 8 a.m. local time; on a Sunday; or on a legal holiday" without prior
    # express consent. 2022 H.B. 102 proposed adding texts to the definition; enactment not confirmed.
    StateRule("UT", "Utah Code Ann. § 13-25a-103(3)", CALLS_ONLY, hours(8, 21), hours(8, 21), None,
              holidays_closed=True),  # 8am-9pm Mon-Sat; none on Sundays or legal holidays
    StateRule("WA", "RCW 80.36.390; RCW 19.158.040(2)", CALLS_ONLY, hours(8, 20), hours(8, 20),
              hours(8, 20)),  # 8am-8pm (2022 amendment); RCW 80.36.400 bars commercial ADAD calls outright
    StateRule("WY", "Wyo. Stat. Ann. § 40-12-302(d)", CALLS_ONLY, hours(8, 20), hours(8, 20),
              hours(8, 20)),  # none before 8am or after 8pm
)
