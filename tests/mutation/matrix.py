"""One mutant's rows of the mutation matrix, from its pytest JUnit XML: `mutant<TAB>test<TAB>
caught|HOLE|SETUP-ERROR`, or one NO-TESTS row. Exit 1 when the mutant was not caught by every test.

Only a failure of the test itself counts as caught. An error in a fixture (setup or
teardown) alone means the test never reached its own assertions against the mutant: it
proves nothing about them, so it is reported like a hole."""

import sys
import xml.etree.ElementTree as ET

mutant, junit = sys.argv[1], sys.argv[2]
rows = []
try:
    cases = ET.parse(junit).getroot().iter("testcase")
except (OSError, ET.ParseError) as e:
    print(f"{mutant}\t(no results: {e})\tNO-TESTS")
    sys.exit(1)
for case in cases:
    name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
    if case.find("failure") is not None:
        verdict = "caught"
    elif case.find("error") is not None:
        verdict = "SETUP-ERROR"
    elif case.find("skipped") is not None:
        verdict = "HOLE"  # under CI=true nothing may skip; a skip proves nothing either
    else:
        verdict = "HOLE"
    rows.append(f"{mutant}\t{name}\t{verdict}")
if not rows:
    rows.append(f"{mutant}\t(no test is marked for it)\tNO-TESTS")
print("\n".join(rows))
sys.exit(0 if all(r.endswith("\tcaught") for r in rows) else 1)
