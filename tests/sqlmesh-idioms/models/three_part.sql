-- a three-part name whose catalog is the gateway's database file, and audits with list arguments
MODEL (
  name db.mart.people_summary,
  kind FULL,
  audits (
    not_null(columns := [id, joined]),
    unique_values(columns := [id]),
    accepted_range(column := score, min_v := 0, max_v := 100)
  )
);
SELECT p.id, p.joined, p.score, d.label
FROM db.raw.people AS p
LEFT JOIN raw.dated AS d ON d.id = p.id
