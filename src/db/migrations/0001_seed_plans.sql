-- Plans are data (issue: foundation). projectLimit null = unlimited.
INSERT INTO "plans" ("slug", "name", "project_limit", "credits_limit", "allow_overage", "allow_logo") VALUES
  ('free', 'Free', 1, 50, false, false),
  ('dev', 'Dev', 3, 500, true, false),
  ('pro', 'Pro', 25, 2000, true, true),
  ('enterprise', 'Enterprise', NULL, 10000, true, true)
ON CONFLICT ("slug") DO NOTHING;
