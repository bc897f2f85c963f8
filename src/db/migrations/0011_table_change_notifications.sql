-- Tables whose rows the service process may keep in memory (db/table-changes.ts): every statement that changes
-- them notifies the channel nfse_table_changed with the table's name, delivered when its transaction commits.
-- api_keys: not on its last_used_at alone (written as keys are used, read by nobody who caches).
CREATE OR REPLACE FUNCTION nfse_table_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('nfse_table_changed', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_changed AFTER INSERT OR DELETE OR TRUNCATE
  OR UPDATE OF id, project_id, org_id, name, key_hash, prefix, scopes, rate_limit_per_minute, active, created_at, revoked_at
  ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION nfse_table_changed();
--> statement-breakpoint
CREATE TRIGGER projects_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON projects FOR EACH STATEMENT EXECUTE FUNCTION nfse_table_changed();
--> statement-breakpoint
CREATE TRIGGER adn_parameters_cache_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON adn_parameters_cache FOR EACH STATEMENT EXECUTE FUNCTION nfse_table_changed();
--> statement-breakpoint
CREATE TRIGGER certificates_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
  ON certificates FOR EACH STATEMENT EXECUTE FUNCTION nfse_table_changed();
