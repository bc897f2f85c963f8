DROP INDEX "webhook_attempts_delivery_idx";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "attempt_limit" integer DEFAULT 5 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_attempts_delivery_number_uq" ON "webhook_attempts" USING btree ("delivery_id","attempt_number");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_uq" ON "webhook_deliveries" USING btree ("event_id","endpoint_id");