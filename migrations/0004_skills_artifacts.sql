-- Skills (tenant-owned Markdown procedures), the skill catalog, and artifacts
-- (Markdown or HTML documents of a knowledge base, with revisions and an
-- optional published page).

-- Catalog templates are product content shipped by migrations. A template's
-- `version` is bumped by the migration that changes its body; installed copies
-- remember the version they were made from. `status = 'retired'` hides a
-- template from the catalog without breaking the copies made from it.
CREATE TABLE skill_templates (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  category TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
  sort_order INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE skills (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  template_id TEXT REFERENCES skill_templates(id) ON DELETE SET NULL,
  template_version INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX skills_tenant_idx ON skills (tenant_id, status, created_at);
-- At most one copy of a template per tenant: concurrent installs cannot both
-- create one, and a second install finds (and reactivates) the first.
CREATE UNIQUE INDEX skills_tenant_template_idx ON skills (tenant_id, template_id) WHERE template_id IS NOT NULL;

CREATE TABLE skill_template_favorites (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  template_id TEXT NOT NULL REFERENCES skill_templates(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, template_id)
);

CREATE TABLE artifacts (
  id TEXT PRIMARY KEY NOT NULL,
  -- Globally unique: it is the public page's path (/p/:slug). Never changes.
  slug TEXT NOT NULL UNIQUE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('markdown', 'html')),
  title TEXT NOT NULL,
  summary TEXT NOT NULL,
  content TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  -- Compare-and-set counter: every change of title, summary or content bumps it
  -- in one conditional UPDATE, and the trigger below records the revision.
  revision INTEGER NOT NULL DEFAULT 1,
  -- NULL = not published.
  published_visibility TEXT CHECK (published_visibility IN ('private', 'public')),
  published_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX artifacts_kb_idx ON artifacts (knowledge_base_id, status, updated_at);

CREATE TABLE artifact_revisions (
  artifact_id TEXT NOT NULL REFERENCES artifacts(id) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  title TEXT NOT NULL,
  summary TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (artifact_id, revision)
);

-- Revisions follow the rows exactly, in the same statement as the change, so a
-- change can never be saved without its revision (or the reverse).
CREATE TRIGGER artifacts_revision_insert AFTER INSERT ON artifacts BEGIN
  INSERT INTO artifact_revisions (artifact_id, revision, title, summary, content, created_at)
  VALUES (NEW.id, NEW.revision, NEW.title, NEW.summary, NEW.content, NEW.updated_at);
END;
CREATE TRIGGER artifacts_revision_update AFTER UPDATE OF revision ON artifacts
WHEN NEW.revision <> OLD.revision BEGIN
  INSERT INTO artifact_revisions (artifact_id, revision, title, summary, content, created_at)
  VALUES (NEW.id, NEW.revision, NEW.title, NEW.summary, NEW.content, NEW.updated_at);
END;

-- The catalog: genuinely useful procedures an agent can follow.
INSERT INTO skill_templates (id, name, description, body, version, category, status, sort_order, created_at, updated_at)
VALUES ('tpl_summarize', 'Summarize documents', 'Produce a faithful, cited summary of one or more knowledge-base documents: the key points, figures and open questions, at the length and for the audience the reader asks for.',
'# Summarize documents

Use this skill when the user asks for a summary, overview, digest, briefing or "TL;DR" of one or more documents in the knowledge base.

## Inputs
- **Documents in scope**: named files, a topic, or a time range. If the request is ambiguous, summarize the documents that best match it and say which ones you used.
- **Audience and length**, if given. Default: a reader who has not seen the documents, about 150 to 300 words per document.

## Steps
1. Identify the documents in scope and retrieve their passages. Never summarize from titles, file names or memory alone.
2. For each document, note:
   - its purpose: what it is and who it is for;
   - its main claims, decisions or findings;
   - the figures that matter: amounts, dates, counts, thresholds, deadlines;
   - anything left open, uncertain or contradicted elsewhere.
3. Order the points by importance to the reader, not by their order in the document.
4. Write the summary. Keep the document''s own terms for defined concepts. Do not add facts, opinions or recommendations that are not in the sources.
5. Check every sentence against the retrieved passages. Remove or qualify anything you cannot point to.

## Output format
- **In one line**: the single most important takeaway.
- **Key points**: 3 to 7 bullets, each one fact or claim with its citation.
- **Numbers and dates**: a short list or table, only if the documents contain figures that matter.
- **Open questions**: what the documents leave unresolved (omit the section if there is nothing).

When several documents are summarized, give each its own heading with the sections above, then finish with **Across the documents**: where they agree, where they differ, and which is more recent.

## Citation rules
- Cite every factual statement with the marker of the passage it comes from, for example [1] or [2][3].
- Quote exact wording only for definitions, commitments and figures; paraphrase everything else.
- If the sources do not cover part of the request, say so plainly instead of filling the gap.',
1, 'research', 'active', 10, '2026-11-21T00:00:00.000Z', '2026-11-21T00:00:00.000Z');

INSERT INTO skill_templates (id, name, description, body, version, category, status, sort_order, created_at, updated_at)
VALUES ('tpl_compare_sources', 'Compare sources', 'Compare what two or more sources say on a topic: where they agree, differ or conflict, why, and which claims rest on stronger evidence, with every point cited.',
'# Compare sources

Use this skill when the user asks how documents, versions, vendors, policies or studies differ, whether they agree, or which source to trust on a point.

## Steps
1. Name the sources being compared and the question the comparison should answer. If the user gave no dimensions, choose 3 to 6 that matter for the topic (for example scope, cost, dates, obligations, method, conclusions) and say which you chose.
2. For each dimension, retrieve the relevant passages from every source. A source that says nothing on a dimension is **not stated**, never silent agreement or disagreement.
3. Classify each dimension:
   - **Agree**: the sources say the same thing, possibly in different words;
   - **Differ**: they say different but compatible things (different detail, scope or emphasis);
   - **Conflict**: both cannot be true;
   - **One source only**: only one source addresses it.
4. For every difference or conflict, look for the explanation in the sources themselves: different dates or versions, different definitions, a different population or scope, or a plain error.
5. Weigh the evidence. Prefer the more recent, more specific, primary or authoritative source, and say why. Do not declare a winner when the sources do not allow it.

## Output format
1. **Bottom line**: two or three sentences that answer the user''s question.
2. **Comparison table**: one row per dimension, one column per source, and a last column with the classification. Keep cells short and put the citations in the cells.
3. **Conflicts**: for each conflict, what each source says (cited), the likely reason, and which claim is better supported.
4. **Gaps**: questions none of the sources answer.

## Citation rules
- Every cell and every claim carries the marker of its passage, for example [2].
- Never put two sources under one citation when they say different things.
- Quote the exact words when a conflict turns on wording (for example "must" versus "should").',
1, 'research', 'active', 20, '2026-11-21T00:00:00.000Z', '2026-11-21T00:00:00.000Z');

INSERT INTO skill_templates (id, name, description, body, version, category, status, sort_order, created_at, updated_at)
VALUES ('tpl_faq', 'Write an FAQ', 'Turn knowledge-base documents into a clear FAQ: the questions readers actually ask, each answered briefly and accurately from the sources, grouped by topic, with gaps listed.',
'# Write an FAQ

Use this skill when the user wants a frequently-asked-questions page, help-centre entries or a question-and-answer section built from the knowledge base.

## Steps
1. Establish the audience (customers, new employees, partners, developers) and the scope. By default, write for a general reader of the documents in scope.
2. Collect candidate questions from the sources:
   - questions the documents answer explicitly;
   - tasks a reader needs to carry out;
   - policies with conditions, exceptions or eligibility rules;
   - figures people look up: prices, limits, deadlines, opening hours;
   - terms that need a definition.
3. Phrase each question the way a reader would ask it ("How do I reset my password?"), not the way the document titles its section.
4. Merge duplicates, drop questions the sources cannot answer, and keep 8 to 20 questions unless the user asks for another number.
5. Answer each question from the retrieved passages. Put the direct answer in the first sentence, then conditions, exceptions and numbered steps. Aim for 40 to 120 words per answer.
6. Group the questions under 3 to 6 topic headings and order them from most to least common within each topic.

## Output format

    ## <Topic>

    ### <Question?>
    <Direct answer in one sentence.> <Conditions, exceptions or numbered steps.> [n]

Finish with a **Not covered** list: questions readers are likely to ask that the sources do not answer, so that the owner of the knowledge base can fill the gaps.

## Citation rules
- Every answer cites the passages it relies on, for example [1][4].
- Never invent policies, contact details, prices or deadlines. When a detail is missing, write "The documents do not say" rather than guessing.
- Keep the source''s wording for anything contractual, legal or safety-related.',
1, 'writing', 'active', 30, '2026-11-21T00:00:00.000Z', '2026-11-21T00:00:00.000Z');

INSERT INTO skill_templates (id, name, description, body, version, category, status, sort_order, created_at, updated_at)
VALUES ('tpl_action_items', 'Extract action items', 'Pull every commitment out of meeting notes, emails or reports: who does what by when, with its source, plus the decisions made and the open questions, as a table ready for a tracker.',
'# Extract action items

Use this skill when the user asks for tasks, next steps, follow-ups, owners or deadlines from meeting notes, transcripts, emails, reports or project plans.

## What counts as an action item
A specific piece of work that someone committed to, was assigned, or was asked to do. A statement of intent ("we should look into pricing") counts only when the text assigns or accepts it; otherwise list it under open questions. Decisions and information are not action items.

## Steps
1. Read the whole source before extracting: later passages often reassign, complete or cancel earlier items.
2. For each item, capture:
   - **Action**: starts with a verb and is specific enough to act on without reading the source ("Send the revised Q3 budget to finance", not "budget").
   - **Owner**: the person or team named. Write "Unassigned" when nobody is named; never guess.
   - **Due**: the deadline as stated. Convert a relative date ("next Friday") only when the date of the source is known, and keep the original wording in brackets.
   - **Status**: open, done or cancelled, when the source says so; otherwise open.
   - **Source**: the citation of the passage.
3. Merge duplicates that describe the same work; keep the most specific wording and all of its citations.
4. List separately the **decisions** (what was agreed) and the **open questions** (raised but not resolved, or intentions without an owner).

## Output format

| # | Action | Owner | Due | Status | Source |
|---|--------|-------|-----|--------|--------|
| 1 | Send the revised Q3 budget to finance | Dana (Ops) | 14 March ("by Friday") | open | [2] |

Then **Decisions** and **Open questions** as bullet lists, each item cited. If there are no action items, say so explicitly rather than returning an empty table.

## Citation rules
- Every row, decision and question cites its passage, for example [3].
- Do not add tasks that the source does not contain, however sensible. Offer them under a separate **Suggested follow-ups** heading only when the user asks for suggestions.',
1, 'productivity', 'active', 40, '2026-11-21T00:00:00.000Z', '2026-11-21T00:00:00.000Z');

INSERT INTO skill_templates (id, name, description, body, version, category, status, sort_order, created_at, updated_at)
VALUES ('tpl_fact_check', 'Fact-check an answer', 'Check a draft answer or text claim by claim against the knowledge base: mark each claim supported, partly supported, contradicted or not found, cite the evidence, and propose a corrected text.',
'# Fact-check an answer

Use this skill when the user asks you to verify, fact-check or review a draft answer, report, email or any other text against the knowledge base, and before publishing an answer that must be exact.

## Steps
1. Split the text into atomic claims: one checkable statement each (a fact, number, date, name, causal link, quotation or policy). Ignore style and clearly marked opinions, but flag opinions presented as facts.
2. For each claim, search the knowledge base with the claim''s key terms and with alternative wordings. Read the retrieved passages in context, not only the sentence that matches.
3. Give each claim one verdict:
   - **Supported**: a passage states it, or it follows directly from stated facts.
   - **Partly supported**: the gist is right but a detail (number, date, scope, qualifier) is wrong or missing.
   - **Contradicted**: a passage states something incompatible with it.
   - **Not found**: the knowledge base does not address it. Not found is not the same as false.
4. Check numbers exactly: units, rounding, totals, percentages and dates. Check that quotations are verbatim and attributed to the right source.
5. Note where sources disagree with each other, or where the supporting source may be out of date.

## Output format
1. **Verdict**: one sentence saying whether the text is reliable as written.
2. **Claims table**:

| # | Claim | Verdict | Evidence | Correction |
|---|-------|---------|----------|------------|

   *Evidence* is a short quotation or paraphrase with its citation; *Correction* stays empty for supported claims.
3. **Corrected text**: the original with the fewest changes needed to make every claim supported or clearly qualified. Remove claims that were not found rather than leaving them unqualified.

## Citation rules
- Every verdict other than Not found cites at least one passage, for example [2].
- Never mark a claim Supported on the strength of general knowledge: only the knowledge base counts.
- Quote the exact words of the source when a claim is Contradicted or Partly supported.',
1, 'quality', 'active', 50, '2026-11-21T00:00:00.000Z', '2026-11-21T00:00:00.000Z');
